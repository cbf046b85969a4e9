package actor

import (
	"fmt"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// deployManifest builds the canonical deployment manifest from the
// repeated --require flags or a --manifest JSON file (not both); nil when
// neither is given (the actor gets no privileged host calls).
func deployManifest(reqs []string, file string) (types.Bytes, error) {
	var m entitlement.Manifest
	switch {
	case file != "" && len(reqs) > 0:
		return nil, fmt.Errorf("give --require or --manifest, not both")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--manifest: %w", err)
		}
		if m, err = entitlement.ParseManifestJSON(b); err != nil {
			return nil, fmt.Errorf("--manifest %s: %w", file, err)
		}
	case len(reqs) > 0:
		for _, r := range reqs {
			e, err := entitlement.ParseRequirement(r)
			if err != nil {
				return nil, fmt.Errorf("--require: %w", err)
			}
			m = append(m, e)
		}
		var err error
		if m, err = m.Normalize(); err != nil {
			return nil, fmt.Errorf("--require: %w", err)
		}
	default:
		return nil, nil
	}
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	return b, nil
}

// requirementText is the --require form of an API manifest entry.
func requirementText(r apitypes.ActorRequirement) string {
	s := r.Entitlement
	if len(r.Params) > 0 {
		s += ":" + strings.Join(r.Params, ",")
	}
	if r.Inheritable {
		s += "+inheritable"
	}
	return s
}

func requiresText(rs []apitypes.ActorRequirement) string {
	if len(rs) == 0 {
		return "none (no timers, no off-chain jobs)"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = requirementText(r)
	}
	return strings.Join(parts, " ")
}

func newActorShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ADDRESS",
		Short: "Show an actor: code hash, owner, balance, storage use, pinned libraries and required entitlements",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			act, err := f.Client().Actors().Get(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, act)
			}
			fmt.Fprintf(f.Out, "actor      %s\n", act.Address)
			fmt.Fprintf(f.Out, "code hash  %s (%d bytes)\n", act.CodeHash, act.CodeSize)
			if act.Owner != nil {
				fmt.Fprintf(f.Out, "owner      %s\n", act.Owner)
			}
			fmt.Fprintf(f.Out, "balance    %s\n", cmdutil.Amount(act.Balance))
			fmt.Fprintf(f.Out, "storage    %d bytes\n", act.StorageBytes)
			fmt.Fprintf(f.Out, "requires   %s\n", requiresText(act.Requires))
			for _, n := range sortedKeys(act.Pins) {
				fmt.Fprintf(f.Out, "pin        %s %s\n", n, act.Pins[n])
			}
			fmt.Fprintf(f.Out, "height     %d\n", act.Height)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

// manifestHints warns, before a deploy, when the source visibly calls a
// privileged host call its manifest does not declare: the deploy succeeds
// but the call will raise HostError. It is a text heuristic, never a gate.
func manifestHints(src []byte, raw types.Bytes) []string {
	var m entitlement.Manifest
	if len(raw) > 0 {
		var err error
		if m, err = entitlement.DecodeManifest(raw); err != nil {
			return nil
		}
	}
	code := string(src)
	var out []string
	if _, ok := m.Find(entitlement.NameTimers); !ok &&
		(strings.Contains(code, "set_timer(") || strings.Contains(code, "set_interval(") || strings.Contains(code, "on_timeout=")) {
		out = append(out, "the code schedules timers but the manifest lacks timers: add --require timers")
	}
	if _, ok := m.Find(entitlement.NameJobs); !ok && strings.Contains(code, "submit_job(") {
		out = append(out, "the code submits off-chain jobs but the manifest lacks jobs: add --require jobs:TYPES (and http:DOMAINS for required_domains)")
	}
	return out
}
