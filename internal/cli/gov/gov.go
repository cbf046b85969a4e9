package gov

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
)

func NewCmdGov(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gov",
		Short: "Governance (0x…09): propose, vote, execute; proposals and governed parameters",
		Long: "Proposals change governed parameters (--param), pay from the Treasury (--disburse, Tier 2) or\n" +
			"ban and unban models in the Model Registry (--ban-model/--unban-model, Tier 1). Both\n" +
			"chambers vote: stake and validators (docs/GOVERNANCE.md). A passed proposal executes after its\n" +
			"tier's timelock, at its ETA or earlier by `gov execute` once the ETA has come.",
	}
	cmd.AddCommand(newGovProposeCmd(f), newGovVoteCmd(f), newGovExecuteCmd(f), newGovShowCmd(f), newGovListCmd(f), NewCmdParams(f))
	return cmd
}

func newGovProposeCmd(f *Factory) *cobra.Command {
	var (
		tf                 cmdutil.TxFlags
		tier               uint8
		title, deposit     string
		paramsKV, disburse []string
		council, ratify    []string
		upgrades           []string
		ban, unban         []string
		reason             string
	)
	cmd := &cobra.Command{
		Use:   "propose --tier N (--param KEY=VALUE … | --disburse TO:AMOUNT … | --upgrade ACTOR:VERSION@HEIGHT … | --ratify ACTOR … | --council ADDR ×9 | --ban-model ID … --reason R | --unban-model ID …) --title T [--deposit AMOUNT] [--from KEY]",
		Short: "Open a proposal; prints its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := &types.GovPropose{Tier: tier, Title: title}
			ms, err := parseModelActions(ban, unban, reason)
			if err != nil {
				return err
			}
			in.Models = ms
			if len(ms) > 0 && !cmd.Flags().Changed("tier") {
				in.Tier = governance.ModelTier
			}
			for _, kv := range paramsKV {
				k, v, ok := strings.Cut(kv, "=")
				n, err := strconv.ParseUint(v, 10, 64)
				if !ok || err != nil {
					return fmt.Errorf("--param %q: want KEY=VALUE with a whole number", kv)
				}
				in.Params = append(in.Params, types.GovParam{Key: k, Value: n})
			}
			for _, u := range upgrades {
				gu, err := parseUpgrade(u)
				if err != nil {
					return err
				}
				in.Upgrade = append(in.Upgrade, gu)
			}
			for _, a := range ratify {
				addr, err := types.ParseAddress(a)
				if err != nil {
					return fmt.Errorf("--ratify %q: %w", a, err)
				}
				in.Ratify = append(in.Ratify, addr)
			}
			for _, a := range council {
				addr, err := types.ParseAddress(a)
				if err != nil {
					return fmt.Errorf("--council %q: %w", a, err)
				}
				in.Council = append(in.Council, addr)
			}
			for _, d := range disburse {
				to, amt, ok := strings.Cut(d, ":")
				a, err := types.ParseAddress(to)
				if !ok || err != nil {
					return fmt.Errorf("--disburse %q: want TO:AMOUNT", d)
				}
				v, err := sdk.ParseCBY(amt)
				if err != nil {
					return fmt.Errorf("--disburse %q: %w", d, err)
				}
				in.Disburse = append(in.Disburse, types.GovDisburse{To: a, Amount: v})
			}
			ctx := cmd.Context()
			dep, err := cmdutil.ParseAmountFlag("deposit", deposit)
			if err != nil {
				return err
			}
			if dep == nil {
				if dep, err = minDeposit(ctx, f.Client()); err != nil {
					return err
				}
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).SendSystem(ctx, types.GovernanceAddress, in, dep)
			if err != nil {
				return err
			}
			if !tf.Wait {
				return f.ReportSubmitted(ctx, tx.Hash(), false, tf.Timeout, tf.AsJSON)
			}
			wctx, cancel := context.WithTimeout(ctx, tf.Timeout)
			defer cancel()
			r, err := f.Client().Chain().WaitForReceipt(wctx, tx.Hash())
			if err != nil {
				return err
			}
			if r.Receipt == nil || r.Receipt.Status != "success" {
				if tf.AsJSON {
					_ = cmdutil.PrintJSON(f.Out, r)
				} else {
					cmdutil.PrintTxResult(f.Out, r)
				}
				return fmt.Errorf("transaction %s failed: %s", tx.Hash(), receiptError(r))
			}
			id := system.FromBE8(r.Receipt.Return)
			if tf.AsJSON {
				return cmdutil.PrintJSON(f.Out, map[string]any{"id": id, "tx": tx.Hash()})
			}
			fmt.Fprintf(f.Out, "Proposal %d (tx %s)\n", id, tx.Hash())
			return nil
		},
	}
	cmd.Flags().Uint8Var(&tier, "tier", 0, "proposal tier 0–4 (spec 002 §11.3)")
	cmd.Flags().StringVar(&title, "title", "", "title")
	cmd.Flags().StringArrayVar(&paramsKV, "param", nil, "parameter change KEY=VALUE (repeatable)")
	cmd.Flags().StringArrayVar(&disburse, "disburse", nil, "treasury payment TO:AMOUNT (CBY, or base units with \"wei\"; repeatable; tier 2)")
	cmd.Flags().StringArrayVar(&upgrades, "upgrade", nil, "Tier 3: switch ACTOR to registered VERSION at block HEIGHT, rollback slot until DEADLINE: ACTOR:VERSION@HEIGHT[:DEADLINE]")
	cmd.Flags().StringArrayVar(&ratify, "ratify", nil, "ratify the Security Council's circuit-break of this system actor (repeatable)")
	cmd.Flags().StringArrayVar(&ban, "ban-model", nil, "Tier 1: ban this Model Registry model id (repeatable; needs --reason)")
	cmd.Flags().StringArrayVar(&unban, "unban-model", nil, "Tier 1: lift the ban on this Model Registry model id (repeatable)")
	cmd.Flags().StringVar(&reason, "reason", "", "why the --ban-model models are banned (recorded on the model)")
	cmd.Flags().StringArrayVar(&council, "council", nil, "Tier 4: a new Security Council member (repeat 9 times)")
	cmd.Flags().StringVar(&deposit, "deposit", "", "deposit (default: the current minimum, gov.min_deposit_cby)")
	tf.Add(cmd)
	return cmd
}

// parseModelActions parses --ban-model, --unban-model and --reason: the
// reason goes with bans only.
func parseModelActions(ban, unban []string, reason string) ([]types.GovModel, error) {
	if (len(ban) > 0) != (reason != "") {
		return nil, errors.New("--ban-model needs --reason, and --reason goes with --ban-model")
	}
	var out []types.GovModel
	for _, flag := range []struct {
		name string
		ids  []string
		ban  bool
	}{{"ban-model", ban, true}, {"unban-model", unban, false}} {
		for _, s := range flag.ids {
			id, ok := models.ParseRef(s)
			if !ok {
				return nil, fmt.Errorf("--%s %q: want a model id, 0x and 64 lowercase hex digits", flag.name, s)
			}
			a := types.GovModel{ID: id, Ban: flag.ban}
			if flag.ban {
				a.Reason = reason
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// parseUpgrade parses ACTOR:VERSION@HEIGHT[:DEADLINE]; the rollback
// deadline defaults to the activation height.
func parseUpgrade(s string) (types.GovUpgrade, error) {
	bad := fmt.Errorf("--upgrade %q: want ACTOR:VERSION@HEIGHT[:DEADLINE]", s)
	actor, rest, ok := strings.Cut(s, ":")
	version, at, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 {
		return types.GovUpgrade{}, bad
	}
	a, err := types.ParseAddress(actor)
	if err != nil {
		return types.GovUpgrade{}, bad
	}
	h, dl, hasDL := strings.Cut(at, ":")
	height, err := strconv.ParseUint(h, 10, 64)
	if err != nil {
		return types.GovUpgrade{}, bad
	}
	deadline := height
	if hasDL {
		if deadline, err = strconv.ParseUint(dl, 10, 64); err != nil {
			return types.GovUpgrade{}, bad
		}
	}
	return types.GovUpgrade{Actor: a, Version: version, Activation: height, RollbackDeadline: deadline}, nil
}

func receiptError(r *apitypes.TxResult) string {
	if r.Receipt == nil {
		return r.Status
	}
	return r.Receipt.Error
}

// minDeposit is the current minimum proposal deposit in base units.
func minDeposit(ctx context.Context, c *sdk.Client) (*big.Int, error) {
	ps, err := c.Gov().Params(ctx, "gov.min_deposit_cby")
	if err != nil {
		return nil, err
	}
	if len(ps.Params) != 1 {
		return nil, errors.New("the node does not report gov.min_deposit_cby")
	}
	return new(big.Int).Mul(new(big.Int).SetUint64(ps.Params[0].Value), big.NewInt(1_000_000_000_000_000_000)), nil
}

var voteChoices = map[string]uint8{"yes": types.VoteYes, "no": types.VoteNo, "abstain": types.VoteAbstain}

func parseProposalID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proposal id %q: want a number", s)
	}
	return id, nil
}

func newGovVoteCmd(f *Factory) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   "vote ID yes|no|abstain [--from KEY]",
		Short: "Vote on a proposal (a later vote replaces an earlier one)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseProposalID(args[0])
			if err != nil {
				return err
			}
			choice, ok := voteChoices[args[1]]
			if !ok {
				return fmt.Errorf("vote %q: want yes, no or abstain", args[1])
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).SendSystem(cmd.Context(), types.GovernanceAddress, &types.GovVote{Proposal: id, Choice: choice}, new(big.Int))
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func newGovExecuteCmd(f *Factory) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   "execute ID [--from KEY]",
		Short: "Execute a queued proposal whose ETA has come",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseProposalID(args[0])
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).SendSystem(cmd.Context(), types.GovernanceAddress, &types.GovExecute{Proposal: id}, new(big.Int))
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func newGovShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a proposal: state, both chambers' tallies, quorum, ETA",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseProposalID(args[0])
			if err != nil {
				return err
			}
			p, err := f.Client().Gov().Proposal(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, p)
			}
			printProposal(f.Out, p)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func printProposal(w io.Writer, p *apitypes.GovProposal) {
	fmt.Fprintf(w, "Proposal %d: %s\n", p.ID, p.Title)
	fmt.Fprintf(w, "  state       %s\n", p.Status)
	fmt.Fprintf(w, "  tier        %d (quorum %d bps, approval > %d bps, validators > %d bps, timelock %d blocks)\n",
		p.Tier, p.QuorumBps, p.ApprovalBps, p.ValidatorBps, p.TimelockBlocks)
	fmt.Fprintf(w, "  proposer    %s (deposit %s)\n", p.Proposer, cmdutil.Amount(p.Deposit))
	for _, c := range p.Params {
		fmt.Fprintf(w, "  param       %s = %d\n", c.Key, c.Value)
	}
	for _, d := range p.Disburse {
		fmt.Fprintf(w, "  disburse    %s to %s\n", cmdutil.Amount(d.Amount), d.To)
	}
	for _, a := range p.Ratify {
		fmt.Fprintf(w, "  ratify      circuit-break of %s\n", a)
	}
	for _, a := range p.Council {
		fmt.Fprintf(w, "  council     %s\n", a)
	}
	for _, a := range p.Models {
		if a.Reason != "" {
			fmt.Fprintf(w, "  %-11s model %s (%s)\n", a.Action, a.ID, a.Reason)
		} else {
			fmt.Fprintf(w, "  %-11s model %s\n", a.Action, a.ID)
		}
	}
	for _, u := range p.Upgrade {
		fmt.Fprintf(w, "  upgrade     %s to %s at block %d (rollback until %d)\n", u.Actor, u.Version, u.Activation, u.RollbackDeadline)
	}
	fmt.Fprintf(w, "  voting      blocks %d–%d\n", p.SnapshotBlock, p.VotingEnd)
	fmt.Fprintf(w, "  stake       yes %s  no %s  abstain %s  of %s  (passing %v)\n", p.Stake.Yes, p.Stake.No, p.Stake.Abstain, p.Stake.Total, p.Stake.Passing)
	fmt.Fprintf(w, "  validators  yes %s  no %s  abstain %s  of %s  (passing %v)\n", p.Validators.Yes, p.Validators.No, p.Validators.Abstain, p.Validators.Total, p.Validators.Passing)
	fmt.Fprintf(w, "  quorum      %v\n", p.QuorumReached)
	if p.ETA > 0 {
		fmt.Fprintf(w, "  eta         block %d\n", p.ETA)
	}
	if p.FailCode != 0 {
		fmt.Fprintf(w, "  failed      %s\n", system.Code(p.FailCode))
	}
}

func newGovListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List proposals",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := f.Client().Gov().Proposals(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ps)
			}
			if len(ps.Proposals) == 0 {
				fmt.Fprintln(f.Out, "No proposals.")
			}
			for _, p := range ps.Proposals {
				eta := "-"
				if p.ETA > 0 {
					eta = strconv.FormatUint(p.ETA, 10)
				}
				fmt.Fprintf(f.Out, "%4d  tier %d  %-9s  stake yes %s/%s  validators yes %s/%s  quorum %v  eta %s  %s\n", p.ID, p.Tier, p.Status,
					p.Stake.Yes, p.Stake.Total, p.Validators.Yes, p.Validators.Total, p.QuorumReached, eta, p.Title)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func NewCmdParams(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "params [KEY]",
		Short: "Show governed parameters (0x09.params): value, source, bounds, tier",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := ""
			if len(args) == 1 {
				key = args[0]
			}
			ps, err := f.Client().Gov().Params(cmd.Context(), key)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ps)
			}
			for _, p := range ps.Params {
				fmt.Fprintf(f.Out, "%-32s %12d  (%s; tier %d; %d–%d)\n", p.Key, p.Value, p.Source, p.Tier, p.Min, p.Max)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func NewCmdTreasury(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "treasury",
		Short: "Treasury (0x…08): balance and disbursements",
	}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Show the Treasury's balance and outflows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := f.Client().Gov().Treasury(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, t)
			}
			fmt.Fprintf(f.Out, "Treasury %s\n  balance        %s\n  disbursed      %s in %d payments\n", t.Address,
				cmdutil.Amount(t.Balance), cmdutil.Amount(t.Disbursed), t.Disbursements)
			return nil
		},
	}
	cmdutil.JSONFlag(show, &asJSON)
	cmd.AddCommand(show)
	return cmd
}
