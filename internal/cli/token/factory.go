package token

import "github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"

// Factory is the shared command factory (node client, keystore, IO).
type Factory = cmdutil.Factory
