// Package governance is the Governance system actor (0x…09, spec 002 §9,
// §11; docs/GOVERNANCE.md): proposals with a deposit, bicameral voting
// (a stake chamber weighted by the validators' stake snapshotted when the
// proposal opens, and a validator chamber of one vote each), the tier
// rules of §11.3, a timelock, and the execution of passed proposals —
// parameter changes into the parameter store (chain/system/params),
// treasury disbursements (chain/system/treasury) and model bans in the
// Model Registry (chain/system/models).
package governance

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Params configure the actor from genesis.
type Params struct {
	// Genesis are genesis values of governed parameters (keys of Defs);
	// absent keys take the declared defaults.
	Genesis map[string]uint64
	// Voters vote on a chain without a Validator Registry epoch (a --dev
	// chain), with one unit of stake each: the genesis validators.
	Voters []types.Address
	// Council are the Security Council's 9 members (none: no Council).
	Council []types.Address
}

// Module is the Governance actor plugged into the executor.
type Module struct {
	store   *params.Store
	voters  []types.Address
	members []types.Address // the Security Council, sorted
	// versions are the registered implementations of upgradeable actors
	// (Versioned), set up before the chain runs and only read afterwards.
	versions map[types.Address][]Version
	// models is the Model Registry that model bans act on (UseModels).
	models ModelRegistry
}

// New returns the actor with p, governing its own parameters (Defs) and
// the other actors' declarations in extra.
func New(p Params, extra ...params.Def) (*Module, error) {
	s, err := params.New(append(Defs(), extra...), p.Genesis)
	if err != nil {
		return nil, fmt.Errorf("governance: %w", err)
	}
	vs := slices.Clone(p.Voters)
	slices.SortFunc(vs, func(a, b types.Address) int { return bytes.Compare(a[:], b[:]) })
	cs := slices.Clone(p.Council)
	slices.SortFunc(cs, func(a, b types.Address) int { return bytes.Compare(a[:], b[:]) })
	if len(cs) != 0 && (len(slices.Compact(slices.Clone(cs))) != CouncilSize || len(cs) != CouncilSize) {
		return nil, fmt.Errorf("governance: the Security Council has %d distinct members of %d, want %d", len(slices.Compact(slices.Clone(cs))), len(cs), CouncilSize)
	}
	return &Module{store: s, voters: slices.Compact(vs), members: cs}, nil
}

// Store is the parameter store the actor governs; other actors read their
// governed values through it.
func (m *Module) Store() *params.Store { return m.store }

// Name implements system.Module.
func (m *Module) Name() string { return "governance" }

// Kinds implements system.Module: propose, vote, execute.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindGovPropose, Check: Check, Handle: func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return m.propose(x, from, in.(*types.GovPropose))
		}},
		{Kind: types.KindGovVote, Check: Check, Handle: func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.vote(x, from, in.(*types.GovVote))
		}},
		{Kind: types.KindGovExecute, Check: Check, Handle: func(x system.Tx, _ types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.executeTx(x, in.(*types.GovExecute).Proposal)
		}},
		{Kind: types.KindGovCouncil, Check: Check, Handle: func(x system.Tx, _ types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.council(x, in.(*types.GovCouncil))
		}},
	}
}

// Limits of a proposal's size.
const (
	MaxTitle   = 200
	MaxActions = 16
)

// Check is the stateless check: governance instructions go to 0x…09, only
// gov_propose carries value, and a proposal is well formed.
func Check(tx *types.Tx, in types.Instruction) error {
	if to, ok := tx.To(); !ok || to != types.GovernanceAddress {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), types.GovernanceAddress)
	}
	p, isPropose := in.(*types.GovPropose)
	if !isPropose && tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value (only gov_propose does: its deposit)", types.ErrMalformedTx, in.InstructionKind())
	}
	if c, ok := in.(*types.GovCouncil); ok {
		return checkCouncil(c)
	}
	if !isPropose {
		return nil
	}
	switch {
	case p.Tier > MaxTier:
		return fmt.Errorf("%w: tier %d above %d", types.ErrMalformedTx, p.Tier, MaxTier)
	case len(p.Title) > MaxTitle:
		return fmt.Errorf("%w: title longer than %d bytes", types.ErrMalformedTx, MaxTitle)
	case kindsOfAction(p) != 1:
		return fmt.Errorf("%w: a proposal changes parameters, disburses, ratifies circuit-breaks, replaces the Council, upgrades or bans models, exactly one of them", types.ErrMalformedTx)
	case len(p.Params)+len(p.Disburse)+len(p.Ratify)+len(p.Council)+len(p.Upgrade)+len(p.Models) > MaxActions:
		return fmt.Errorf("%w: more than %d actions", types.ErrMalformedTx, MaxActions)
	}
	for _, d := range p.Disburse {
		if d.Amount == nil || d.Amount.Sign() <= 0 {
			return fmt.Errorf("%w: disbursement amount must be positive", types.ErrMalformedTx)
		}
	}
	return checkModels(p.Models)
}

func kindsOfAction(p *types.GovPropose) int {
	n := 0
	for _, l := range []int{len(p.Params), len(p.Disburse), len(p.Ratify), len(p.Council), len(p.Upgrade), len(p.Models)} {
		if l > 0 {
			n++
		}
	}
	return n
}

// EndBlock implements system.Module: proposals whose voting closed are
// tallied, and queued proposals whose ETA has come are executed, in
// proposal order.
func (m *Module) EndBlock(x system.Tx) error {
	ids, err := activeIDs(x.State())
	if err != nil {
		return err
	}
	if err := lapse(x); err != nil {
		return err
	}
	if err := m.activateDue(x); err != nil {
		return err
	}
	h := x.Env().Height
	for _, id := range ids {
		p, err := ReadProposal(x.State(), id)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("governance: active proposal %d has no record", id)
		}
		if p.Status == StatusVoting && (h >= p.VotingEnd || p.allVoted()) {
			if err := m.tally(x, p); err != nil {
				return err
			}
		}
		if p.Status == StatusQueued && h >= p.ETA {
			if err := m.execute(x, p); err != nil {
				return err
			}
		}
	}
	return nil
}
