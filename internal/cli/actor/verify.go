package actor

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/cli/verify"
	"github.com/spf13/cobra"
)

// showVerifiedActorState is `actor state ADDR KEY --verify`: one storage
// key, proven against a certified header.
func showVerifiedActorState(cmd *cobra.Command, f *Factory, o *verify.Opts, addr types.Address, args []string, asJSON bool) error {
	if len(args) != 2 {
		return errors.New("--verify checks one storage key: actor state ADDRESS KEY --verify")
	}
	lc, err := o.LightClient()
	if err != nil {
		return err
	}
	key := args[1]
	v, err := lc.Fetch(cmd.Context(), f.Client(), state.StorageKey(addr, []byte(key)))
	if err != nil {
		return verify.Failed(fmt.Sprintf("actor %s key %q", addr, key), err)
	}
	if asJSON {
		var val *types.Bytes
		if v.Value != nil {
			b := types.Bytes(v.Value)
			val = &b
		}
		return cmdutil.PrintJSON(f.Out, struct {
			Actor    types.Address `json:"actor"`
			Key      string        `json:"key"`
			Value    *types.Bytes  `json:"value"`
			Verified verify.JSON   `json:"verified"`
		}{addr, key, val, verify.Info(v)})
	}
	shown := "(absent)"
	if v.Value != nil {
		var x any
		if err := codec.Unmarshal(v.Value, &x); err == nil {
			shown = fmt.Sprintf("%v", x)
		} else {
			shown = types.Bytes(v.Value).String()
		}
	}
	fmt.Fprintf(f.Out, "%-24s %s\n", key, shown)
	verify.Print(f.Out, v)
	return nil
}
