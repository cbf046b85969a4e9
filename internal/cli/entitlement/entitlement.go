package entitlement

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// Entitlement Registry (0x…07) commands (seed 004 §7).

// constraintFlags are the Constraints of a grant or delegation.
type constraintFlags struct {
	validFrom, validUntil, maxUses uint64
	depth                          uint8
	irrevocable                    bool
}

func (c *constraintFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Uint64Var(&c.validFrom, "valid-from", 0, "first block the entitlement is valid (0: now)")
	fl.Uint64Var(&c.validUntil, "valid-until", 0, "last block the entitlement is valid (0: no expiry)")
	fl.Uint64Var(&c.maxUses, "max-uses", 0, "maximum uses (0: unlimited)")
	fl.Uint8Var(&c.depth, "delegation-depth", 0, "how many further delegations are allowed (0: not delegatable; at most 5)")
	fl.BoolVar(&c.irrevocable, "irrevocable", false, "the granter cannot revoke it")
}

func (c *constraintFlags) constraints() entitlement.Constraints {
	out := entitlement.Constraints{MaxUses: c.maxUses, Delegatable: c.depth > 0, DelegationDepthMax: c.depth, Revocable: !c.irrevocable}
	if c.validFrom > 0 {
		v := c.validFrom
		out.ValidFrom = &v
	}
	if c.validUntil > 0 {
		v := c.validUntil
		out.ValidUntil = &v
	}
	return out
}

func NewCmdEntitlement(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "entitlement", Short: "Permissions in the Entitlement Registry (0x…07)",
		Long: "Scopes: global, actor:ADDR, token:ID, runner:ADDR, pool:NAME, namespace:NAME.\n" +
			"Actions: all, join_pool:NAME, execute:HANDLER, runner_submit_job, custom:TEXT, … (see docs/OFFCHAIN.md §9).\n" +
			"Pools and namespaces belong to whoever grants under them first; actor and runner scopes to that\n" +
			"address; a token scope to the token's admin (or governance); global scopes to governance."}
	cmd.AddCommand(newEntitlementGrantCmd(f), newEntitlementRevokeCmd(f), newEntitlementDelegateCmd(f), newEntitlementListCmd(f), newEntitlementCheckCmd(f),
		newRoleCreateCmd(f), newRoleAssignCmd(f, true), newRoleAssignCmd(f, false))
	return cmd
}

// reportID waits for the receipt and prints the 32-byte id it returns.
func reportID(f *Factory, cmd *cobra.Command, tx *types.Tx, tf *cmdutil.TxFlags, what string) error {
	if err := f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON); err != nil || !tf.Wait || tf.AsJSON {
		return err
	}
	r, err := f.Client().Chain().Tx(cmd.Context(), tx.Hash())
	if err != nil {
		return err
	}
	var id []byte
	if r.Receipt != nil && codec.Unmarshal(r.Receipt.Return, &id) == nil && len(id) == len(types.Hash{}) {
		fmt.Fprintf(f.Out, "%s 0x%x\n", what, id)
	}
	return nil
}

func grantCmd(f *Factory, use, short string, args cobra.PositionalArgs, parse func(a []string) (types.Address, entitlement.Scope, entitlement.Action, error)) *cobra.Command {
	var (
		tf cmdutil.TxFlags
		cf constraintFlags
	)
	cmd := &cobra.Command{Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, a []string) error {
			grantee, s, act, err := parse(a)
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Entitlements().Grant(cmd.Context(), grantee, s, act, cf.constraints(), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return reportID(f, cmd, tx, &tf, "Entitlement")
		}}
	cf.add(cmd)
	tf.Add(cmd)
	return cmd
}

func newEntitlementGrantCmd(f *Factory) *cobra.Command {
	var scope, action string
	cmd := grantCmd(f, "grant GRANTEE --scope SCOPE --action ACTION [constraints] [--from KEY]", "Grant ACTION on SCOPE to GRANTEE",
		cobra.ExactArgs(1), func(a []string) (types.Address, entitlement.Scope, entitlement.Action, error) {
			grantee, err := f.ResolveAddress(a[0])
			if err != nil {
				return grantee, entitlement.Scope{}, entitlement.Action{}, err
			}
			s, err := entitlement.ParseScope(scope)
			if err != nil {
				return grantee, s, entitlement.Action{}, fmt.Errorf("--scope: %w", err)
			}
			act, err := entitlement.ParseAction(action)
			if err != nil {
				return grantee, s, act, fmt.Errorf("--action: %w", err)
			}
			return grantee, s, act, nil
		})
	cmd.Flags().StringVar(&scope, "scope", "", "scope (e.g. pool:gpu)")
	cmd.Flags().StringVar(&action, "action", "", "action (e.g. join_pool:gpu)")
	return cmd
}

func newEntitlementRevokeCmd(f *Factory) *cobra.Command {
	return cmdutil.SendCmd(f, "revoke ID [--from KEY]", "Revoke an entitlement you granted (its delegations stop working with it)", "",
		cobra.ExactArgs(1), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			id, err := types.ParseHash(a[0])
			if err != nil {
				return nil, fmt.Errorf("entitlement id: %w", err)
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Entitlements().Revoke(cmd.Context(), id, sdk.TxOptions{})
		})
}

func newEntitlementDelegateCmd(f *Factory) *cobra.Command {
	var (
		tf cmdutil.TxFlags
		cf constraintFlags
	)
	cmd := &cobra.Command{
		Use:   "delegate PARENT_ID GRANTEE [constraints] [--from KEY]",
		Short: "Delegate an entitlement you hold to GRANTEE under strictly narrower constraints",
		Long: "The child keeps the parent's scope and action; its delegation depth must be lower than the\n" +
			"parent's, its validity window inside the parent's, its uses within the parent's remaining ones.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			parent, err := types.ParseHash(a[0])
			if err != nil {
				return fmt.Errorf("parent id: %w", err)
			}
			grantee, err := f.ResolveAddress(a[1])
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Entitlements().Delegate(cmd.Context(), parent, grantee, cf.constraints(), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return reportID(f, cmd, tx, &tf, "Entitlement")
		},
	}
	cf.add(cmd)
	tf.Add(cmd)
	return cmd
}

func newEntitlementListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list ADDRESS",
		Short: "List the live entitlements ADDRESS holds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			es, err := f.Client().Entitlements().List(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, es)
			}
			if len(es) == 0 {
				fmt.Fprintln(f.Out, "No entitlements.")
			}
			for _, e := range es {
				via := "granted by " + e.Granter.String()
				if e.Parent != nil {
					via = fmt.Sprintf("delegated (depth %d) from %s", e.Depth, e.Parent)
				}
				fmt.Fprintf(f.Out, "%s  %s on %s  %s\n", e.ID, e.Action, e.Scope, via)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newEntitlementCheckCmd(f *Factory) *cobra.Command {
	var (
		asJSON        bool
		scope, action string
		height        uint64
	)
	cmd := &cobra.Command{
		Use:   "check ADDRESS --scope SCOPE --action ACTION [--height H]",
		Short: "Say whether ADDRESS may perform ACTION on SCOPE (own entitlements and roles)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			s, err := entitlement.ParseScope(scope)
			if err != nil {
				return fmt.Errorf("--scope: %w", err)
			}
			act, err := entitlement.ParseAction(action)
			if err != nil {
				return fmt.Errorf("--action: %w", err)
			}
			r, err := f.Client().Entitlements().Check(cmd.Context(), addr, s, act, height)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, r)
			}
			verdict := "denied"
			if r.Allowed {
				verdict = "allowed"
			}
			fmt.Fprintf(f.Out, "%s: %s on %s at block %d: %s\n", addr, act, s, r.Height, verdict)
			return nil
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope (e.g. pool:gpu)")
	cmd.Flags().StringVar(&action, "action", "", "action (e.g. join_pool:gpu)")
	cmd.Flags().Uint64Var(&height, "height", 0, "block height to check at (default: the next block)")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newRoleCreateCmd(f *Factory) *cobra.Command {
	var (
		tf              cmdutil.TxFlags
		cf              constraintFlags
		scopes, actions string
	)
	cmd := &cobra.Command{
		Use:   "role-create NAME --scopes S1,S2 --actions A1,A2 [--valid-from H --valid-until H] [--from KEY]",
		Short: "Create a role granting every scope × action to its assignees",
		Long:  "The role id is keccak256(\"cowboy-role-v1:\" ‖ creator ‖ name); you may only name scopes you could grant under.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			var ss []entitlement.Scope
			for _, t := range cmdutil.SplitList(scopes) {
				s, err := entitlement.ParseScope(t)
				if err != nil {
					return fmt.Errorf("--scopes: %w", err)
				}
				ss = append(ss, s)
			}
			var as []entitlement.Action
			for _, t := range cmdutil.SplitList(actions) {
				x, err := entitlement.ParseAction(t)
				if err != nil {
					return fmt.Errorf("--actions: %w", err)
				}
				as = append(as, x)
			}
			if len(ss) == 0 || len(as) == 0 {
				return fmt.Errorf("--scopes and --actions are required")
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Entitlements().CreateRole(cmd.Context(), a[0], ss, as, cf.constraints(), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return reportID(f, cmd, tx, &tf, "Role")
		},
	}
	cmd.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes")
	cmd.Flags().StringVar(&actions, "actions", "", "comma-separated actions")
	cf.add(cmd)
	tf.Add(cmd)
	return cmd
}

func newRoleAssignCmd(f *Factory, assign bool) *cobra.Command {
	use, short := "role-assign ROLE_ID ADDRESS [--from KEY]", "Assign a role you created to ADDRESS"
	if !assign {
		use, short = "role-revoke ROLE_ID ADDRESS [--from KEY]", "Remove a role you created from ADDRESS"
	}
	return cmdutil.SendCmd(f, use, short, "", cobra.ExactArgs(2), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
		role, err := types.ParseHash(a[0])
		if err != nil {
			return nil, fmt.Errorf("role id: %w", err)
		}
		who, err := f.ResolveAddress(a[1])
		if err != nil {
			return nil, err
		}
		key, err := f.Signer(tf.From)
		if err != nil {
			return nil, err
		}
		if assign {
			return f.Client().Account(key).Entitlements().AssignRole(cmd.Context(), role, who, sdk.TxOptions{})
		}
		return f.Client().Account(key).Entitlements().RevokeRole(cmd.Context(), role, who, sdk.TxOptions{})
	})
}
