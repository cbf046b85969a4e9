package actor

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"sort"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/cli/verify"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// sendOpts are the flags shared by commands that send a transaction.
type sendOpts struct {
	from    string
	value   string
	cycles  uint64
	cells   uint64
	timeout time.Duration
	asJSON  bool
}

func (o *sendOpts) add(cmd *cobra.Command, withValue bool) {
	cmd.Flags().StringVar(&o.from, "from", "", "sending key name (default: the only key)")
	if withValue {
		cmd.Flags().StringVar(&o.value, "value", "0", "CBY to send along (\"1.5\", or base units \"1500wei\")")
	}
	cmd.Flags().Uint64Var(&o.cycles, "cycles", 0, fmt.Sprintf("cycles limit (default %d; unused cycles are refunded)", sdk.DefaultActorCycles))
	cmd.Flags().Uint64Var(&o.cells, "cells", 0, "cells limit (default: payload + 50,000)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the receipt")
	cmdutil.JSONFlag(cmd, &o.asJSON)
}

// sendAndWait submits an instruction and waits for its receipt. With
// --json it prints the result and reports printed = true, so the caller
// adds nothing.
func sendAndWait(f *Factory, ctx context.Context, o *sendOpts, to *types.Address, in types.Instruction) (r *apitypes.TxResult, printed bool, err error) {
	tx, err := send(f, ctx, o, to, in)
	if err != nil {
		return nil, false, err
	}
	if r, err = f.WaitReceipt(ctx, tx.Hash(), o.timeout); err != nil {
		return nil, false, err
	}
	if o.asJSON {
		return r, true, cmdutil.PrintJSON(f.Out, r)
	}
	return r, false, nil
}

func send(f *Factory, ctx context.Context, o *sendOpts, to *types.Address, in types.Instruction) (*types.Tx, error) {
	value := new(big.Int)
	if o.value != "" && o.value != "0" {
		v, err := sdk.ParseCBY(o.value)
		if err != nil {
			return nil, err
		}
		value = v
	}
	key, err := f.Signer(o.from)
	if err != nil {
		return nil, err
	}
	return f.Client().Account(key).Actors().Send(ctx, to, in, value, sdk.TxOptions{CyclesLimit: o.cycles, CellsLimit: o.cells})
}

func readCode(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read code: %w", err)
	}
	return b, nil
}

func NewCmdActor(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "actor", Short: "Deploy, call, query and inspect Python actors"}
	cmd.AddCommand(newActorDeployCmd(f), newActorShowCmd(f), newActorCallCmd(f), newActorQueryCmd(f), newActorStateCmd(f), newActorCodeCmd(f), newActorPinsCmd(f))
	cmd.AddCommand(newRentCmds(f)...)
	return cmd
}

func newActorDeployCmd(f *Factory) *cobra.Command {
	var (
		o                      sendOpts
		code, salt, initH, ini string
		requires               []string
		manifest               string
	)
	cmd := &cobra.Command{
		Use:   "deploy --code FILE --salt SALT [--init-handler H --init-payload JSON] [--require ENTITLEMENT ... | --manifest FILE]",
		Short: "Deploy an actor; prints the resolved library imports and the actor address",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if code == "" || salt == "" {
				return fmt.Errorf("--code and --salt are required")
			}
			src, err := readCode(code)
			if err != nil {
				return err
			}
			args, err := sdk.JSONArgs(ini)
			if err != nil {
				return fmt.Errorf("--init-payload: %w", err)
			}
			if initH != "" && initH != "__init__" && ini != "" {
				// A single JSON value is one positional argument of the init handler.
				args, err = sdk.JSONArgs("[" + ini + "]")
				if err != nil {
					return err
				}
			}
			req, err := deployManifest(requires, manifest)
			if err != nil {
				return err
			}
			for _, h := range manifestHints(src, req) {
				fmt.Fprintln(f.ErrOut, "warning: "+h)
			}
			r, printed, err := sendAndWait(f, cmd.Context(), &o, nil, &types.Deploy{Code: src, Salt: []byte(salt), InitHandler: initH, InitArgs: args, Requires: req})
			if err != nil || printed {
				return err
			}
			if r.Receipt.Status != "success" {
				return fmt.Errorf("deploy failed: %s", r.Receipt.Error)
			}
			addr := *r.Receipt.Created
			act, err := f.Client().Actors().Get(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if len(act.Pins) > 0 {
				fmt.Fprintln(f.Out, "Library imports resolved:")
				for _, n := range sortedKeys(act.Pins) {
					fmt.Fprintf(f.Out, "   %s %s\n", n, act.Pins[n])
				}
			}
			fmt.Fprintf(f.Out, "Actor deployed: %s\n", addr)
			fmt.Fprintf(f.Out, "  code hash %s, tx %s, block %d, fee %s\n", act.CodeHash, r.Tx.Hash, *r.BlockHeight, cmdutil.Amount(r.Receipt.FeePaid))
			fmt.Fprintf(f.Out, "  requires %s\n", requiresText(act.Requires))
			printEvents(f, r.Receipt.Events)
			return nil
		},
	}
	cmd.Flags().StringVar(&code, "code", "", "Python source file")
	cmd.Flags().StringVar(&salt, "salt", "", "salt for the actor address (any string)")
	cmd.Flags().StringVar(&initH, "init-handler", "", "handler to run atomically with the deploy (default: only the constructor)")
	cmd.Flags().StringVar(&ini, "init-payload", "", "JSON argument of the init handler (for __init__: an array or object of arguments)")
	cmd.Flags().StringArrayVar(&requires, "require", nil, "entitlement the actor requires (repeatable): timers | jobs:TYPE[,TYPE] (llm, http, mcp, custom) | http:DOMAIN[,DOMAIN] (names, *.suffix, set:NAME); append +inheritable to pass it to child actors. Without any, the actor may not use timers or submit jobs")
	cmd.Flags().StringVar(&manifest, "manifest", "", `deployment manifest JSON file: {"requires": [{"entitlement": "jobs", "params": ["http"]}, ...]}`)
	o.add(cmd, true)
	return cmd
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func printEvents(f *Factory, evs []apitypesEvent) {
	for _, ev := range evs {
		fmt.Fprintf(f.Out, "  event %s from %s %s\n", ev.Topic, ev.Emitter, string(ev.Decoded))
	}
}

func newActorCallCmd(f *Factory) *cobra.Command {
	var (
		o       sendOpts
		payload string
	)
	cmd := &cobra.Command{
		Use:   "call ADDRESS HANDLER [--payload JSON]",
		Short: "Call an actor handler in a transaction (JSON array: positional arguments, object: keyword arguments)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			args, err := sdk.JSONArgs(payload)
			if err != nil {
				return fmt.Errorf("--payload: %w", err)
			}
			r, printed, err := sendAndWait(f, cmd.Context(), &o, &addr, &types.Call{Handler: a[1], Args: args})
			if err != nil || printed {
				return err
			}
			rc := r.Receipt
			if rc.Status != "success" {
				cmdutil.PrintTxResult(f.Out, r)
				return fmt.Errorf("call failed: %s", rc.Error)
			}
			fmt.Fprintf(f.Out, "Returned %s\n", orNull(cborText(rc.Return)))
			fmt.Fprintf(f.Out, "  tx %s, block %d, used %d cycles / %d cells, fee %s\n", r.Tx.Hash, *r.BlockHeight, rc.CyclesUsed, rc.CellsUsed, cmdutil.Amount(rc.FeePaid))
			printEvents(f, rc.Events)
			for i, m := range rc.Messages {
				fmt.Fprintf(f.Out, "  message %d %s -> %s.%s depth %d parent %d: %s %s\n", i, m.From, m.To, m.Handler, m.Depth, m.Parent, statusText(m.Status), m.Error)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&payload, "payload", "", "handler arguments as JSON")
	o.add(cmd, true)
	return cmd
}

func newActorQueryCmd(f *Factory) *cobra.Command {
	var (
		payload string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "query ADDRESS HANDLER [--payload JSON]",
		Short: "Run a handler read-only (no transaction, no fee)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			args, err := sdk.JSONArgs(payload)
			if err != nil {
				return fmt.Errorf("--payload: %w", err)
			}
			r, err := f.Client().Actors().Query(cmd.Context(), addr, a[1], args)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, r)
			}
			fmt.Fprintln(f.Out, orNull(string(r.Decoded)))
			return nil
		},
	}
	cmd.Flags().StringVar(&payload, "payload", "", "handler arguments as JSON")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newActorStateCmd(f *Factory) *cobra.Command {
	var asJSON bool
	var vo verify.Opts
	cmd := &cobra.Command{
		Use:   "state ADDRESS [KEY]",
		Short: "Show an actor's storage (all keys, or those starting with KEY)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			if vo.On {
				return showVerifiedActorState(cmd, f, &vo, addr, a, asJSON)
			}
			key := ""
			if len(a) == 2 {
				key = a[1]
			}
			cursor := ""
			for {
				page, err := f.Client().Actors().State(cmd.Context(), addr, key, cursor, 1000)
				if err != nil {
					return err
				}
				if asJSON {
					if err := cmdutil.PrintJSON(f.Out, page); err != nil {
						return err
					}
				} else {
					for _, e := range page.Entries {
						k := e.KeyText
						if k == "" {
							k = e.Key.String()
						}
						v := string(e.Decoded)
						if v == "" {
							v = e.Value.String()
						}
						fmt.Fprintf(f.Out, "%-24s %s\n", k, v)
					}
				}
				if page.NextCursor == "" {
					return nil
				}
				cursor = page.NextCursor
			}
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	verify.AddFlags(cmd, &vo)
	return cmd
}

func newActorCodeCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "code ADDRESS",
		Short: "Print an actor's source",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			code, err := f.Client().Actors().Code(cmd.Context(), addr)
			if err != nil {
				return err
			}
			_, err = f.Out.Write(code)
			return err
		},
	}
}

func newActorPinsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pins ADDRESS",
		Short: "Show an actor's pinned libraries (import name -> code hash)",
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
				return cmdutil.PrintJSON(f.Out, act.Pins)
			}
			if len(act.Pins) == 0 {
				fmt.Fprintln(f.Out, "No pinned libraries.")
			}
			for _, n := range sortedKeys(act.Pins) {
				fmt.Fprintf(f.Out, "%-20s %s\n", n, act.Pins[n])
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func NewCmdLib(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "lib", Short: "Publish, remove and list account-scoped actor libraries"}
	var (
		po         sendOpts
		name, code string
	)
	publish := &cobra.Command{
		Use:   "publish --name NAME --code FILE",
		Short: "Publish (or re-publish) a library under your account",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || code == "" {
				return fmt.Errorf("--name and --code are required")
			}
			src, err := readCode(code)
			if err != nil {
				return err
			}
			r, printed, err := sendAndWait(f, cmd.Context(), &po, nil, &types.PublishLibrary{Name: name, Code: src})
			if err != nil || printed {
				return err
			}
			if r.Receipt.Status != "success" {
				return fmt.Errorf("publish failed: %s", r.Receipt.Error)
			}
			canon, err := types.CanonicalSource(src)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Library published: publisher=%s name=%s code_hash=%s size=%d\n", r.Tx.From, name, types.CodeHash(canon), len(canon))
			return nil
		},
	}
	publish.Flags().StringVar(&name, "name", "", "import name (a Python identifier, at most 64 characters)")
	publish.Flags().StringVar(&code, "code", "", "Python source file")
	po.add(publish, false)

	var (
		ro      sendOpts
		rmName  string
		listOut bool
	)
	remove := &cobra.Command{
		Use:   "remove --name NAME",
		Short: "Stop offering a library name to new deploys (existing pins keep working)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rmName == "" {
				return fmt.Errorf("--name is required")
			}
			r, printed, err := sendAndWait(f, cmd.Context(), &ro, nil, &types.RemoveLibrary{Name: rmName})
			if err != nil || printed {
				return err
			}
			if r.Receipt.Status != "success" {
				return fmt.Errorf("remove failed: %s", r.Receipt.Error)
			}
			fmt.Fprintf(f.Out, "Library removed: publisher=%s name=%s\n", r.Tx.From, rmName)
			return nil
		},
	}
	remove.Flags().StringVar(&rmName, "name", "", "library name")
	ro.add(remove, false)

	list := &cobra.Command{
		Use:   "list [ADDRESS|KEYNAME]",
		Short: "List the libraries an account has published (default: the only key)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			who := ""
			if len(a) == 1 {
				who = a[0]
			}
			addr, err := f.AddressOrOnlyKey(who)
			if err != nil {
				return err
			}
			libs, err := f.Client().Actors().Libraries(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if listOut {
				return cmdutil.PrintJSON(f.Out, libs)
			}
			if len(libs) == 0 {
				fmt.Fprintf(f.Out, "%s has published no libraries.\n", addr)
			}
			for _, l := range libs {
				fmt.Fprintf(f.Out, "%-20s %s %6d bytes  published at %d\n", l.Name, l.CodeHash, l.CodeSize, l.PublishedAt)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(list, &listOut)
	cmd.AddCommand(publish, remove, list)
	return cmd
}
