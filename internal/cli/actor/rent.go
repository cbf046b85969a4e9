package actor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// State rent commands (docs/RENT.md): rent shows an actor's rent record;
// rent-pay, rent-sponsor and bond send the rent module's instructions;
// archive fetches a live actor's storage with proofs into a file; restore
// submits an archive for an evicted actor.

func newRentCmds(f *Factory) []*cobra.Command {
	return []*cobra.Command{newActorRentCmd(f), newActorRentPayCmd(f), newActorRentSponsorCmd(f), newActorBondCmd(f), newActorArchiveCmd(f), newActorRestoreCmd(f)}
}

func newActorRentCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rent ADDRESS",
		Short: "Show an actor's state rent record: standing, debt, prepaid rent, quota, bond, archive root",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			acc, err := f.Client().Rent().Account(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, acc)
			}
			if acc == nil {
				fmt.Fprintf(f.Out, "Actor %s pays no rent (storage within the free allowance, no bond)\n", addr)
				return nil
			}
			fmt.Fprintf(f.Out, "Actor %s: %s\n", addr, acc.Status)
			fmt.Fprintf(f.Out, "  debt %s, prepaid %s, settled through epoch %d\n", cmdutil.Amount(acc.Debt.String()), cmdutil.Amount(acc.Prepaid.String()), acc.Charged)
			if acc.OverdueSince != 0 {
				fmt.Fprintf(f.Out, "  overdue since epoch %d\n", acc.OverdueSince)
			}
			if acc.Quota != 0 {
				fmt.Fprintf(f.Out, "  quota %d bytes, bond %s\n", acc.Quota, cmdutil.Amount(acc.Bond.String()))
			}
			if ar := acc.Archive; ar != nil {
				fmt.Fprintf(f.Out, "  evicted at block %d: archive root %s, %d entries, %d bytes, %d chunks (next %d)\n", ar.Height, ar.Root, ar.Entries, ar.Bytes, len(ar.Chunks), ar.Next)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

// rentSend sends a rent instruction and prints its outcome.
func rentSend(f *Factory, cmd *cobra.Command, o *sendOpts, in types.Instruction, what string) error {
	to := types.RentModuleAddress
	r, printed, err := sendAndWait(f, cmd.Context(), o, &to, in)
	if err != nil || printed {
		return err
	}
	if r.Receipt.Status != "success" {
		cmdutil.PrintTxResult(f.Out, r)
		return fmt.Errorf("%s failed: %w", what, sdk.ReceiptErr(r.Receipt))
	}
	fmt.Fprintf(f.Out, "%s: tx %s, block %d\n", what, r.Tx.Hash, *r.BlockHeight)
	printEvents(f, r.Receipt.Events)
	return nil
}

func newActorRentPayCmd(f *Factory) *cobra.Command {
	var o sendOpts
	cmd := &cobra.Command{
		Use:   "rent-pay ADDRESS --value CBY",
		Short: "Pay toward an actor's rent (any account may): its debt first, the rest prepaid",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			return rentSend(f, cmd, &o, &types.RentPay{Actor: addr}, "rent paid")
		},
	}
	o.add(cmd, true)
	return cmd
}

func newActorRentSponsorCmd(f *Factory) *cobra.Command {
	var (
		o      sendOpts
		epochs uint64
	)
	cmd := &cobra.Command{
		Use:   "rent-sponsor ADDRESS --epochs N",
		Short: "Prepay N rent epochs of an actor's rent (and its debt) from your balance",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			return rentSend(f, cmd, &o, &types.RentSponsor{Actor: addr, Epochs: epochs}, "rent sponsored")
		},
	}
	cmd.Flags().Uint64Var(&epochs, "epochs", 1, "rent epochs to prepay")
	o.add(cmd, false)
	return cmd
}

func newActorBondCmd(f *Factory) *cobra.Command {
	var o sendOpts
	cmd := &cobra.Command{
		Use:   "bond ADDRESS QUOTA_BYTES",
		Short: "Set an actor's storage quota (owner only, up to 8 MiB), locking or returning the storage bond",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			q, err := strconv.ParseUint(a[1], 10, 64)
			if err != nil {
				return fmt.Errorf("QUOTA_BYTES: %w", err)
			}
			return rentSend(f, cmd, &o, &types.StorageBond{Actor: addr, Quota: q}, "storage bonded")
		},
	}
	o.add(cmd, false)
	return cmd
}

func newActorArchiveCmd(f *Factory) *cobra.Command {
	var (
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "archive ADDRESS --out FILE",
		Short: "Fetch a live actor's storage, every slot proven against one state root, into an archive file for a later restore",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			if out == "" {
				return fmt.Errorf("--out FILE is required")
			}
			ar, err := f.Client().Rent().Archive(cmd.Context(), addr)
			if err != nil {
				return err
			}
			h, err := ar.WriteFile(out)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, map[string]any{"actor": addr, "file": out, "file_hash": h, "root": ar.Root,
					"height": ar.Height, "state_root": ar.StateRoot, "entries": len(ar.Entries)})
			}
			fmt.Fprintf(f.Out, "Archived %d entries of %s at block %d (state root %s)\n", len(ar.Entries), addr, ar.Height, ar.StateRoot)
			fmt.Fprintf(f.Out, "  archive root %s\n  file %s (keccak256 %s)\n", ar.Root, out, h)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "archive file to write")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newActorRestoreCmd(f *Factory) *cobra.Command {
	var (
		o       sendOpts
		archive string
		payDebt bool
	)
	cmd := &cobra.Command{
		Use:   "restore ADDRESS --archive FILE [--pay-debt]",
		Short: "Restore an evicted actor from its archive (checked against the root kept at eviction), one transaction per chunk",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			ar, err := sdk.ReadRentArchive(archive)
			if err != nil {
				return err
			}
			if ar.Actor != addr {
				return fmt.Errorf("%w: the archive is of %s, not %s", sdk.ErrRestoreMismatch, ar.Actor, addr)
			}
			key, err := f.Signer(o.from)
			if err != nil {
				return err
			}
			// Each chunk, and the debt, waits for its receipt.
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout*time.Duration(len(rent.ChunkEntries(ar.Entries))+2))
			defer cancel()
			hs, err := f.Client().Account(key).Rent().Restore(ctx, ar, payDebt, sdk.TxOptions{CyclesLimit: o.cycles, CellsLimit: o.cells})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Restored %s from archive root %s in %d transactions\n", addr, ar.Root, len(hs))
			return nil
		},
	}
	cmd.Flags().StringVar(&archive, "archive", "", "archive file (cowboy actor archive)")
	cmd.Flags().BoolVar(&payDebt, "pay-debt", false, "pay the actor's rent debt first, from the sending key")
	_ = cmd.MarkFlagRequired("archive")
	o.add(cmd, false)
	return cmd
}
