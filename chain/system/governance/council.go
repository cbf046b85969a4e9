package governance

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The Security Council (spec 002 §11.2): a 7-of-9 signer set.
const (
	CouncilSize      = 9
	CouncilThreshold = 7
)

// KeyCouncilRatify is the window in which a circuit-break must be
// ratified by an executed proposal, or it lapses.
const KeyCouncilRatify = "gov.council_ratify_blocks"

// Pause is a circuit-break of a system actor.
type Pause struct {
	_      struct{} `cbor:",toarray"`
	Actor  types.Address
	Since  uint64
	Lapses uint64 // the block whose end lifts it; 0 once ratified
}

// StatusCancelled is a queued proposal the Council cancelled.
const StatusCancelled uint8 = 6

func councilNonceKey() []byte { return system.Key(types.GovernanceAddress, []byte("cnonce")) }

// PausePrefix is the state prefix of the circuit-breaks.
func PausePrefix() []byte { return system.Key(types.GovernanceAddress, []byte("pause")) }
func pauseKey(a types.Address) []byte {
	return system.Key(types.GovernanceAddress, []byte("pause"), a[:])
}

// ReadPause is a's circuit-break, nil if there is none.
func ReadPause(r state.Reader, a types.Address) (*Pause, error) {
	return system.Get[Pause](r, pauseKey(a), "governance: pause %s", a)
}

// ReadPauses is every circuit-break, by actor.
func ReadPauses(r state.Reader) ([]Pause, error) {
	var out []Pause
	err := r.Scan(PausePrefix(), func(_, v []byte) error {
		var p Pause
		if err := codec.Unmarshal(v, &p); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// ReadCouncilNonce is the nonce the Council's next action must carry.
func ReadCouncilNonce(r state.Reader) (uint64, error) {
	b, ok, err := r.Get(councilNonceKey())
	if err != nil || !ok {
		return 0, err
	}
	var n uint64
	return n, codec.Unmarshal(b, &n)
}

func councilKey() []byte { return system.Key(types.GovernanceAddress, []byte("council")) }

// councilSet is as sorted, or InvalidProposal unless it is CouncilSize
// distinct addresses.
func councilSet(as []types.Address) ([]types.Address, error) {
	cs := slices.Clone(as)
	slices.SortFunc(cs, func(a, b types.Address) int { return bytes.Compare(a[:], b[:]) })
	if len(cs) != CouncilSize || len(slices.Compact(slices.Clone(cs))) != CouncilSize {
		return nil, system.Failf(system.CodeInvalidProposal, "InvalidProposal: a Security Council is %d distinct members", CouncilSize)
	}
	return cs, nil
}

// ReadCouncil is the Council a Tier 4 proposal installed, sorted; nil if
// none did (the genesis Council is in force).
func ReadCouncil(r state.Reader) ([]types.Address, error) {
	b, ok, err := r.Get(councilKey())
	if err != nil || !ok {
		return nil, err
	}
	var cs []types.Address
	return cs, codec.Unmarshal(b, &cs)
}

// Council is the Council in force in r, sorted: the one a Tier 4 proposal
// installed, else the genesis Council.
func (m *Module) Council(r state.Reader) ([]types.Address, error) {
	cs, err := ReadCouncil(r)
	if err != nil || cs != nil {
		return cs, err
	}
	return slices.Clone(m.members), nil
}

// pausable reports whether the Council may circuit-break a: a system
// actor with instructions, other than Governance itself.
func pausable(a types.Address) bool {
	for _, s := range []types.Address{types.RunnerRegistryAddress, types.JobDispatcherAddress, types.ResultVerifierAddress,
		types.SecretsManagerAddress, types.TEEVerifierAddress, types.EntitlementRegistryAddress, types.StorageManagerAddress,
		types.RelayRegistryAddress, types.ValidatorRegistryAddress} {
		if a == s {
			return true
		}
	}
	return false
}

// verifyCouncil checks that in carries at least CouncilThreshold valid
// signatures by distinct members over its digest, with the current nonce.
func (m *Module) verifyCouncil(x system.Tx, in *types.GovCouncil) error {
	members, err := m.Council(x.State())
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return system.Failf(system.CodeCouncilSignatures, "CouncilSignatures: the chain has no Security Council")
	}
	nonce, err := ReadCouncilNonce(x.State())
	if err != nil {
		return err
	}
	if in.Nonce != nonce {
		return system.Failf(system.CodeCouncilSignatures, "CouncilSignatures: nonce %d, the Council's next is %d", in.Nonce, nonce)
	}
	var chainID uint64
	if tx := x.Transaction(); tx != nil {
		chainID = tx.ChainID()
	}
	h := types.CouncilDigest(chainID, in.Action, in.Proposal, in.Actor, in.Nonce)
	seen := map[types.Address]bool{}
	for _, sig := range in.Signatures {
		if len(sig) != 65 {
			continue
		}
		pub, err := crypto.SigToPub(h[:], sig)
		if err != nil {
			continue
		}
		a := types.PubkeyToAddress(*pub)
		if _, ok := slices.BinarySearchFunc(members, a, func(c, t types.Address) int { return bytes.Compare(c[:], t[:]) }); ok {
			seen[a] = true
		}
	}
	if len(seen) < CouncilThreshold {
		return system.Failf(system.CodeCouncilSignatures, "CouncilSignatures: %d valid member signatures, %d needed", len(seen), CouncilThreshold)
	}
	x.State().Set(councilNonceKey(), codec.MustMarshal(nonce+1))
	return nil
}

// council is gov_council: cancel a queued Tier 0–3 proposal, or
// circuit-break a system actor (lapsing after gov.council_ratify_blocks
// unless an executed proposal ratifies it), or lift one. Fast-track
// applies only to system-actor upgrades, which this chain does not have
// yet, so it is refused; the Council can do nothing else.
func (m *Module) council(x system.Tx, in *types.GovCouncil) error {
	switch in.Action {
	case types.CouncilCancel, types.CouncilPause, types.CouncilUnpause, types.CouncilFastTrack:
	default:
		return system.Failf(system.CodeCouncilPower, "CouncilPower: action %d is not a Council power", in.Action)
	}
	if err := m.verifyCouncil(x, in); err != nil {
		return err
	}
	o, h := x.State(), x.Env().Height
	switch in.Action {
	case types.CouncilCancel:
		p, err := ReadProposal(o, in.Proposal)
		if err != nil {
			return err
		}
		if p == nil {
			return system.Failf(system.CodeNoSuchProposal, "NoSuchProposal: %d", in.Proposal)
		}
		if p.Tier > 3 {
			return system.Failf(system.CodeCouncilPower, "CouncilPower: the Council cannot cancel a Tier %d proposal", p.Tier)
		}
		if p.Status != StatusQueued {
			return system.Failf(system.CodeNotQueued, "NotQueued: proposal %d is %s", p.ID, StatusName(p.Status))
		}
		p.Status = StatusCancelled
		o.Delete(activeKey(p.ID))
		save(o, p)
	case types.CouncilPause:
		if !pausable(in.Actor) {
			return system.Failf(system.CodeCouncilPower, "CouncilPower: %s is not a system actor the Council may circuit-break", in.Actor)
		}
		window, err := m.store.Get(o, KeyCouncilRatify)
		if err != nil {
			return err
		}
		o.Set(pauseKey(in.Actor), codec.MustMarshal(&Pause{Actor: in.Actor, Since: h, Lapses: h + window}))
	case types.CouncilFastTrack:
		// With a proposal: lower a queued upgrade's timelock; with an
		// actor: roll an activated upgrade back.
		if in.Proposal != 0 {
			if err := m.fastTrack(x, in.Proposal); err != nil {
				return err
			}
		} else if err := m.rollback(x, in.Actor); err != nil {
			return err
		}
	case types.CouncilUnpause:
		p, err := ReadPause(o, in.Actor)
		if err != nil {
			return err
		}
		if p == nil {
			return system.Failf(system.CodeNotPaused, "NotPaused: %s", in.Actor)
		}
		o.Delete(pauseKey(in.Actor))
	}
	x.Emit(types.GovernanceAddress, CouncilEvent{Action: in.Action, Proposal: in.Proposal, Actor: in.Actor, Nonce: in.Nonce})
	return nil
}

// ratify makes the circuit-breaks of actors permanent (until the Council
// lifts them); a proposal ratifying an actor that is not paused fails.
func ratify(o *state.Overlay, actors []types.Address) error {
	for _, a := range actors {
		p, err := ReadPause(o, a)
		if err != nil {
			return err
		}
		if p == nil {
			return system.Failf(system.CodeNotPaused, "NotPaused: %s", a)
		}
		p.Lapses = 0
		o.Set(pauseKey(a), codec.MustMarshal(p))
	}
	return nil
}

// lapse lifts the unratified circuit-breaks whose window ended at h.
func lapse(x system.Tx) error {
	ps, err := ReadPauses(x.State())
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Lapses != 0 && x.Env().Height >= p.Lapses {
			x.State().Delete(pauseKey(p.Actor))
		}
	}
	return nil
}

// Guard wraps mods so that the instructions of a circuit-broken actor
// (the transaction's target) are refused with CodeActorPaused.
func Guard(mods ...system.Module) []system.Module {
	out := make([]system.Module, len(mods))
	for i, m := range mods {
		out[i] = guarded{m}
	}
	return out
}

type guarded struct{ system.Module }

func (g guarded) Kinds() []system.Kind {
	ks := g.Module.Kinds()
	for i := range ks {
		h := ks[i].Handle
		ks[i].Handle = func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			if tx := x.Transaction(); tx != nil {
				if to, ok := tx.To(); ok {
					p, err := ReadPause(x.State(), to)
					if err != nil {
						return nil, err
					}
					if p != nil {
						return nil, system.Failf(system.CodeActorPaused, "ActorPaused: %s is circuit-broken by the Security Council", to)
					}
				}
			}
			return h(x, from, in)
		}
	}
	return ks
}

// CouncilEvent records a Council action.
type CouncilEvent struct {
	Action   uint8         `cbor:"action" json:"action"`
	Proposal uint64        `cbor:"proposal" json:"proposal"`
	Actor    types.Address `cbor:"actor" json:"actor"`
	Nonce    uint64        `cbor:"nonce" json:"nonce"`
}

// TopicCouncil is the topic of CouncilEvent.
const TopicCouncil = "gov.council"

// Topic implements system.EventData.
func (CouncilEvent) Topic() string { return TopicCouncil }

func checkCouncil(in *types.GovCouncil) error {
	if len(in.Signatures) > CouncilSize {
		return fmt.Errorf("%w: more than %d council signatures", types.ErrMalformedTx, CouncilSize)
	}
	return nil
}
