package ethbridge

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the bridge hooks module plugged into the executor.
type Module struct {
	on        bool
	members   []types.Address
	threshold int
	fee       uint64
	src       params.Source
}

// New returns the module; p nil is the bridge off. p must Validate.
func New(p *Params) (*Module, error) {
	m := &Module{fee: DefaultEventFee}
	if p == nil {
		return m, nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	m.on, m.members, m.threshold = true, slices.Clone(p.Members), int(p.Threshold)
	if p.EventFee != 0 {
		m.fee = p.EventFee
	}
	return m, nil
}

// UseParams makes the module read bridge.event_fee from src.
func (m *Module) UseParams(src params.Source) { m.src = src }

// Enabled reports whether the chain has a bridge set.
func (m *Module) Enabled() bool { return m.on }

// Name implements system.Module.
func (m *Module) Name() string { return "ethbridge" }

// EndBlock implements system.Module: the module has no end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// Kinds implements system.Module.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindBridgeSubscribe, Check: Check, Handle: m.gated(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.subscribe(x, from, in.(*types.BridgeSubscribe))
		})},
		{Kind: types.KindBridgeEvent, Check: Check, Handle: m.gated(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return m.event(x, from, in.(*types.BridgeEvent))
		})},
		{Kind: types.KindBridgeWrap, Check: Check, Handle: m.gated(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			id, err := m.wrap(x, from, in.(*types.BridgeWrap))
			if err != nil {
				return nil, err
			}
			return codec.MustMarshal(id[:]), nil
		})},
		{Kind: types.KindBridgeMint, Check: Check, Handle: m.gated(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.mint(x, from, in.(*types.BridgeMint))
		})},
		{Kind: types.KindBridgeBurn, Check: Check, Handle: m.gated(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.burn(x, from, in.(*types.BridgeBurn))
		})},
	}
}

// gated fails every instruction with BridgeOff on a chain without a bridge set.
func (m *Module) gated(h system.Handler) system.Handler {
	return func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		if !m.on {
			return nil, system.Failf(system.CodeBridgeOff, "BridgeOff: this chain has no bridge set (no \"bridge\" in genesis)")
		}
		return h(x, from, in)
	}
}

// Check is the stateless check of the bridge instructions: each goes to
// the module; only bridge_subscribe carries value (the payment).
func Check(tx *types.Tx, in types.Instruction) error {
	if to, ok := tx.To(); !ok || to != types.EthBridgeAddress {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), types.EthBridgeAddress)
	}
	if in.InstructionKind() != types.KindBridgeSubscribe && tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value", types.ErrMalformedTx, in.InstructionKind())
	}
	return nil
}

// IsMember reports whether a is in the bridge set.
func (m *Module) IsMember(a types.Address) bool { return slices.Contains(m.members, a) }

func (m *Module) member(a types.Address) error {
	if !m.IsMember(a) {
		return system.Failf(system.CodeNotBridgeMember, "NotBridgeMember: %s is not in the authorised bridge set", a)
	}
	return nil
}

// attest records from's attestation of content digest for id. It returns
// the members whose agreeing attestations reach the threshold (nil while
// the threshold is not reached). A delivered id fails with EventDelivered,
// a second attestation by the same member with AlreadyAttested.
func (m *Module) attest(x system.Tx, id types.Hash, from types.Address, digest types.Hash) ([]types.Address, *Attestation, error) {
	a, err := ReadAttestation(x.State(), id)
	if err != nil {
		return nil, nil, err
	}
	if a == nil {
		a = &Attestation{}
	}
	if a.Done != 0 {
		return nil, nil, system.Failf(system.CodeEventDelivered, "EventDelivered: %s was delivered at height %d", id, a.Done)
	}
	for _, v := range a.Votes {
		if v.Member == from {
			return nil, nil, system.Failf(system.CodeAlreadyAttested, "AlreadyAttested: %s already attested %s", from, id)
		}
	}
	a.Votes = append(a.Votes, Vote{Member: from, Digest: digest})
	var agree []types.Address
	for _, v := range a.Votes {
		if v.Digest == digest {
			agree = append(agree, v.Member)
		}
	}
	if len(agree) < m.threshold {
		x.State().Set(AttestationKey(id), codec.MustMarshal(a))
		x.Emit(types.EthBridgeAddress, &AttestedEvent{ID: id, Member: from, Votes: uint64(len(agree))})
		return nil, a, nil
	}
	a.Done, a.By = x.Env().Height, agree
	x.State().Set(AttestationKey(id), codec.MustMarshal(a))
	return agree, a, nil
}

// pay splits fee from the module's balance among members: equal shares,
// the remainder to the first.
func pay(x system.Tx, fee *big.Int, members []types.Address) error {
	if fee.Sign() == 0 {
		return nil
	}
	n := big.NewInt(int64(len(members)))
	share, rem := new(big.Int).QuoRem(fee, n, new(big.Int))
	for i, a := range members {
		v := new(big.Int).Set(share)
		if i == 0 {
			v.Add(v, rem)
		}
		if v.Sign() == 0 {
			continue
		}
		if err := x.MoveValue(types.EthBridgeAddress, a, v); err != nil {
			return err
		}
	}
	return nil
}
