package gov

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
)

var councilActions = map[string]uint8{"cancel": types.CouncilCancel, "fast-track": types.CouncilFastTrack,
	"pause": types.CouncilPause, "unpause": types.CouncilUnpause}

// councilFlags are the fields every signer and the submitter must agree on.
type councilFlags struct {
	nonce   int64
	chainID uint64
}

func (cf *councilFlags) add(cmd *cobra.Command) {
	cmd.Flags().Int64Var(&cf.nonce, "nonce", -1, "the Council's nonce (default: the node's current one)")
	cmd.Flags().Uint64Var(&cf.chainID, "chain-id", 0, "chain id (default: the node's)")
}

// action builds the unsigned action ACTION TARGET, asking the node for the
// nonce and chain id not given.
func (cf *councilFlags) action(ctx context.Context, f *Factory, name, target string) (*types.GovCouncil, uint64, error) {
	a, ok := councilActions[name]
	if !ok {
		return nil, 0, fmt.Errorf("council action %q: want cancel, fast-track, pause or unpause", name)
	}
	in := &types.GovCouncil{Action: a}
	addr, addrErr := types.ParseAddress(target)
	switch {
	case a == types.CouncilFastTrack && addrErr != nil:
		// fast-track ID lowers a queued upgrade's timelock; fast-track
		// ACTOR rolls an upgraded actor back.
		id, err := parseProposalID(target)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: want a proposal id or an actor address: %w", name, err)
		}
		in.Proposal = id
	case a != types.CouncilCancel:
		if addrErr != nil {
			return nil, 0, fmt.Errorf("%s: actor address: %w", name, addrErr)
		}
		in.Actor = addr
	default:
		id, err := parseProposalID(target)
		if err != nil {
			return nil, 0, err
		}
		in.Proposal = id
	}
	chainID := cf.chainID
	if chainID == 0 {
		st, err := f.Client().Chain().Status(ctx)
		if err != nil {
			return nil, 0, err
		}
		chainID = st.ChainID
	}
	if cf.nonce >= 0 {
		in.Nonce = uint64(cf.nonce)
	} else {
		c, err := f.Client().Gov().Council(ctx)
		if err != nil {
			return nil, 0, err
		}
		in.Nonce = c.Nonce
	}
	return in, chainID, nil
}

func NewCmdCouncil(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "council",
		Short: "Security Council (7-of-9): cancel, fast-track, pause, unpause; offline signing",
		Long: "Each member signs the action offline (`council sign ACTION TARGET --nonce N --chain-id ID --from KEY`,\n" +
			"which prints a signature); anyone then submits it with 7 signatures\n" +
			"(`council ACTION TARGET --sig S1 … --sig S7 --nonce N`). ACTION TARGET is `cancel ID`, `fast-track ID`\n" +
			"(lower a queued Tier 3 upgrade's timelock, if its vote met the fast-track thresholds), `fast-track ACTOR`\n" +
			"(roll an upgraded system actor back to its rollback slot), `pause ACTOR` or `unpause ACTOR`.",
	}
	cmd.AddCommand(newCouncilShowCmd(f), newCouncilSignCmd(f))
	for name := range councilActions {
		cmd.AddCommand(newCouncilSubmitCmd(f, name))
	}
	return cmd
}

func newCouncilShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the Council, its next nonce and the circuit-breaks in force",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.Client().Gov().Council(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, c)
			}
			fmt.Fprintf(f.Out, "Security Council: %d members, threshold %d, next nonce %d\n", len(c.Members), c.Threshold, c.Nonce)
			for _, m := range c.Members {
				fmt.Fprintf(f.Out, "  member  %s\n", m)
			}
			for _, p := range c.Paused {
				fmt.Fprintf(f.Out, "  paused  %s since %d (ratified %v, lapses %d)\n", p.Actor, p.Since, p.Ratified, p.Lapses)
			}
			for _, u := range c.Upgrades {
				fmt.Fprintf(f.Out, "  version %s %s", u.Actor, cmp.Or(u.Version, "genesis"))
				if u.Pending != "" {
					fmt.Fprintf(f.Out, ", %s pending at block %d", u.Pending, u.Activation)
				}
				if u.Rollback != "" {
					fmt.Fprintf(f.Out, ", rollback to %s until block %d", u.Rollback, u.RollbackDeadline)
				}
				fmt.Fprintln(f.Out)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newCouncilSignCmd(f *Factory) *cobra.Command {
	var (
		cf   councilFlags
		from string
	)
	cmd := &cobra.Command{
		Use:   "sign ACTION TARGET [--nonce N --chain-id ID] --from KEY",
		Short: "Sign a Council action; prints the signature (offline with --nonce and --chain-id)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, chainID, err := cf.action(cmd.Context(), f, args[0], args[1])
			if err != nil {
				return err
			}
			key, err := f.Signer(from)
			if err != nil {
				return err
			}
			h := types.CouncilDigest(chainID, in.Action, in.Proposal, in.Actor, in.Nonce)
			sig, err := crypto.Sign(h[:], key)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "0x%x\n", sig)
			return nil
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&from, "from", "", "signing key name (default: the only key)")
	return cmd
}

func newCouncilSubmitCmd(f *Factory, name string) *cobra.Command {
	var (
		cf   councilFlags
		tf   cmdutil.TxFlags
		sigs []string
	)
	target := "ID"
	if name != "cancel" {
		target = "ACTOR"
	}
	cmd := &cobra.Command{
		Use:   name + " " + target + " --sig SIG … [--nonce N] [--from KEY]",
		Short: "Submit a signed Council action (" + name + ")",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, _, err := cf.action(cmd.Context(), f, name, args[0])
			if err != nil {
				return err
			}
			for _, s := range sigs {
				b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
				if err != nil || len(b) != 65 {
					return fmt.Errorf("--sig %q: want 65 bytes of hex", s)
				}
				in.Signatures = append(in.Signatures, b)
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).SendSystem(cmd.Context(), types.GovernanceAddress, in, new(big.Int))
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	cf.add(cmd)
	tf.Add(cmd)
	cmd.Flags().StringArrayVar(&sigs, "sig", nil, "a member's signature from `council sign` (repeatable; 7 needed)")
	return cmd
}
