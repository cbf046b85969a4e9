package validators

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The Validator Registry (0x…0C) keeps the proof-of-stake validator set in
// state (spec 002 "Validator Set", "Staking and Rewards", "Slashing"):
// registration with stake and a BLS key, activation at the next epoch
// boundary, exit with unbonding, inflation rewards by stake, jailing for
// downtime and slashing for equivocation. At the end of every epoch's last
// block the next epoch's set and seed are written to state; the node reads
// them (ReadEpoch) to reconfigure consensus. Chains whose genesis has no
// BLS validators (--dev) have no epoch record and none of this runs.

// Params are the registry's parameters; zero fields take the
// defaults of spec 002 §13.
type Params struct {
	EpochLength    uint64   // blocks per epoch; default 3,600
	UnbondingMs    uint64   // default 7 days
	JailMs         uint64   // default 24 hours
	DowntimeWindow uint64   // blocks per downtime window; default 1,000 (jailed above half missed)
	MinStake       *big.Int // default 10,000 CBY
	SlashBps       uint64   // equivocation slash in basis points; default 100 (1%)
}

func (p *Params) fill() {
	if p.EpochLength == 0 {
		p.EpochLength = 3600
	}
	if p.UnbondingMs == 0 {
		p.UnbondingMs = 7 * 24 * 3600 * 1000
	}
	if p.JailMs == 0 {
		p.JailMs = 24 * 3600 * 1000
	}
	if p.DowntimeWindow == 0 {
		p.DowntimeWindow = 1000
	}
	if p.MinStake == nil {
		p.MinStake = new(big.Int).Mul(big.NewInt(10_000), baseUnitsPerCBY)
	}
	if p.SlashBps == 0 {
		p.SlashBps = 100
	}
}

var baseUnitsPerCBY = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// Validator statuses.
const (
	ValidatorPending uint8 = 1 // registered; joins the set at the next epoch boundary
	ValidatorActive  uint8 = 2 // bonded and in (or eligible for) the set
	ValidatorExiting uint8 = 3 // exit signalled; leaves the set at the next boundary
	ValidatorExited  uint8 = 4 // out of the set; stake withdrawable after UnbondAt
)

// ValidatorRecord is one registered validator.
type ValidatorRecord struct {
	_            struct{} `cbor:",toarray"`
	Address      types.Address
	BLSKey       types.Bytes
	Stake        *big.Int // base units held by the registry
	Status       uint8
	Jailed       bool
	JailedUntil  uint64 // ms
	UnbondAt     uint64 // ms; set on exit
	Missed       uint64 // votes missed in the current downtime window
	RegisteredAt uint64 // height
}

// SetMember is a member of an epoch's consensus set; Weight is the stake in
// whole CBY (the consensus voting weight).
type SetMember struct {
	_       struct{} `cbor:",toarray"`
	Address types.Address
	BLSKey  types.Bytes
	Weight  uint64
}

// Epoch is the consensus configuration of an epoch: it starts at
// StartHeight, draws proposers from Seed (zero: the genesis seed) and its
// members, in this order, index the signer bitmaps.
type Epoch struct {
	_           struct{} `cbor:",toarray"`
	Number      uint64
	StartHeight uint64
	Seed        types.Hash
	Members     []SetMember
}

func registryKey(parts ...[]byte) []byte {
	return state.Key(state.PrefixSystem, append([][]byte{types.ValidatorRegistryAddress[:]}, parts...)...)
}

// ValidatorKey is the state key of a validator record.
func ValidatorKey(a types.Address) []byte { return registryKey([]byte("val/"), a[:]) }

// ValidatorPrefix prefixes every validator record.
func ValidatorPrefix() []byte { return registryKey([]byte("val/")) }

func blsKeyIndex(k []byte) []byte {
	h := types.Keccak256(k)
	return registryKey([]byte("key/"), h[:])
}

var (
	epochKey     = registryKey([]byte("epoch"))
	rewardTsKey  = registryKey([]byte("reward_ts"))
	genesisTsKey = registryKey([]byte("genesis_ts"))
)

func evidenceKey(a types.Address, round uint64) []byte {
	return registryKey([]byte("ev/"), a[:], binary.BigEndian.AppendUint64(nil, round))
}

// ReadEpoch returns the current epoch, or nil on a chain without a
// validator registry (a --dev chain).
func ReadEpoch(r state.Reader) (*Epoch, error) {
	return system.Get[Epoch](r, epochKey, "decode epoch")
}

// ReadValidator returns a validator record, or nil.
func ReadValidator(r state.Reader, a types.Address) (*ValidatorRecord, error) {
	return system.Get[ValidatorRecord](r, ValidatorKey(a), "decode validator %s", a)
}

func writeValidator(o *state.Overlay, v *ValidatorRecord) {
	o.Set(ValidatorKey(v.Address), codec.MustMarshal(v))
}

// GenesisValidator is a validator of the genesis set.
type GenesisValidator struct {
	Address types.Address
	BLSKey  types.Bytes
	Stake   *big.Int // base units; the registry's genesis allocation must hold the sum
}

// SetGenesisValidators writes the genesis set into o: one active record
// per validator, epoch 0 (members in the given order, the genesis seed)
// and the reward clock.
func SetGenesisValidators(o *state.Overlay, vals []GenesisValidator, timestampMs uint64) {
	ep := &Epoch{Number: 0, StartHeight: 1}
	for _, v := range vals {
		writeValidator(o, &ValidatorRecord{Address: v.Address, BLSKey: v.BLSKey, Stake: new(big.Int).Set(v.Stake), Status: ValidatorActive})
		o.Set(blsKeyIndex(v.BLSKey), v.Address[:])
		ep.Members = append(ep.Members, SetMember{Address: v.Address, BLSKey: v.BLSKey, Weight: new(big.Int).Quo(v.Stake, baseUnitsPerCBY).Uint64()})
	}
	o.Set(epochKey, codec.MustMarshal(ep))
	ts := binary.BigEndian.AppendUint64(nil, timestampMs)
	o.Set(rewardTsKey, ts)
	o.Set(genesisTsKey, ts)
}

func checkValidatorTx(tx *types.Tx, in types.Instruction) error {
	to, ok := tx.To()
	if !ok || to != types.ValidatorRegistryAddress {
		return fmt.Errorf("%w: %s transactions go to the Validator Registry %s", types.ErrMalformedTx, in.InstructionKind(), types.ValidatorRegistryAddress)
	}
	if _, reg := in.(*types.ValidatorRegister); !reg && tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: only validator_register carries value (the stake)", types.ErrMalformedTx)
	}
	return nil
}

func (x *txCtx) dispatch(from types.Address, in types.Instruction) error {
	ep, err := ReadEpoch(x.State())
	if err != nil {
		return err
	}
	if ep == nil {
		return system.Failf(system.CodeNoValidatorRegistry, "NoValidatorRegistry: this chain has a fixed single validator (--dev)")
	}
	switch v := in.(type) {
	case *types.ValidatorRegister:
		return x.validatorRegister(from, v)
	case *types.ValidatorExit:
		return x.validatorExit(from)
	case *types.ValidatorWithdraw:
		return x.validatorWithdraw(from)
	case *types.ValidatorEvidence:
		return x.validatorEvidence(v)
	case *types.ValidatorUnjail:
		return x.validatorUnjail(from)
	}
	return fmt.Errorf("%w: %s", types.ErrUnsupported, in.InstructionKind())
}

func (x *txCtx) validatorRegister(from types.Address, in *types.ValidatorRegister) error {
	p := x.m.p
	pk, err := bls.PublicKeyFromBytes(in.BLSKey)
	if err != nil {
		return system.Failf(system.CodeInvalidBLSKey, "InvalidBLSKey: %v", err)
	}
	pop, err := bls.SignatureFromBytes(in.BLSPoP)
	if err != nil || !pk.VerifyPossession(pop) {
		return system.Failf(system.CodeInvalidProofOfPossession, "InvalidProofOfPossession: bls_pop does not prove possession of bls_key")
	}
	rec, err := ReadValidator(x.State(), from)
	if err != nil {
		return err
	}
	owner, used, err := x.State().Get(blsKeyIndex(in.BLSKey))
	if err != nil {
		return err
	}
	if used && types.Address(owner) != from {
		return system.Failf(system.CodeBLSKeyInUse, "BLSKeyInUse: the key belongs to validator %s", types.Address(owner))
	}
	stake := x.Transaction().Value()
	switch {
	case rec == nil:
		rec = &ValidatorRecord{Address: from, BLSKey: append(types.Bytes(nil), in.BLSKey...), Stake: new(big.Int), Status: ValidatorPending, RegisteredAt: x.Env().Height}
	case rec.Status == ValidatorExiting || rec.Status == ValidatorExited:
		return system.Failf(system.CodeValidatorExiting, "ValidatorExiting: withdraw the stake before registering again")
	case string(rec.BLSKey) != string(in.BLSKey):
		return system.Failf(system.CodeBLSKeyMismatch, "BLSKeyMismatch: a registered validator keeps its key")
	}
	rec.Stake.Add(rec.Stake, stake)
	if rec.Stake.Cmp(p.MinStake) < 0 {
		return system.Failf(system.CodeInsufficientStake, "InsufficientStake: validator stake %s below the minimum %s", rec.Stake, p.MinStake)
	}
	if stake.Sign() > 0 {
		if err := x.MoveValue(from, types.ValidatorRegistryAddress, stake); err != nil {
			return err
		}
	}
	writeValidator(x.State(), rec)
	x.State().Set(blsKeyIndex(in.BLSKey), from[:])
	x.Emit(types.ValidatorRegistryAddress, &ValidatorRegisteredEvent{Validator: from, Stake: rec.Stake})
	return nil
}

func (x *txCtx) validatorExit(from types.Address) error {
	rec, err := ReadValidator(x.State(), from)
	if err != nil {
		return err
	}
	if rec == nil || (rec.Status != ValidatorActive && rec.Status != ValidatorPending) {
		return system.Failf(system.CodeNotAValidator, "NotAValidator: %s is not a bonded validator", from)
	}
	unbonding, err := x.m.unbondingMs(x.State())
	if err != nil {
		return err
	}
	rec.Status = ValidatorExiting
	rec.UnbondAt = x.Env().Timestamp + unbonding
	writeValidator(x.State(), rec)
	x.Emit(types.ValidatorRegistryAddress, &ValidatorExitingEvent{Validator: from, UnbondAtMs: rec.UnbondAt})
	return nil
}

func (x *txCtx) validatorWithdraw(from types.Address) error {
	rec, err := ReadValidator(x.State(), from)
	if err != nil {
		return err
	}
	if rec == nil || (rec.Status != ValidatorExiting && rec.Status != ValidatorExited) {
		return system.Failf(system.CodeNotExiting, "NotExiting: %s has not signalled an exit", from)
	}
	if rec.Status != ValidatorExited || x.Env().Timestamp < rec.UnbondAt {
		return system.Failf(system.CodeStillBonded, "StillBonded: the stake unbonds at %d ms after leaving the set", rec.UnbondAt)
	}
	if rec.Stake.Sign() > 0 {
		if err := x.MoveValue(types.ValidatorRegistryAddress, from, rec.Stake); err != nil {
			return err
		}
	}
	x.State().Delete(ValidatorKey(from))
	x.State().Delete(blsKeyIndex(rec.BLSKey))
	x.Emit(types.ValidatorRegistryAddress, &ValidatorWithdrawnEvent{Validator: from, Stake: rec.Stake})
	return nil
}

func (x *txCtx) validatorUnjail(from types.Address) error {
	rec, err := ReadValidator(x.State(), from)
	if err != nil {
		return err
	}
	if rec == nil || !rec.Jailed {
		return system.Failf(system.CodeNotJailed, "NotJailed: %s is not jailed", from)
	}
	if x.Env().Timestamp < rec.JailedUntil {
		return system.Failf(system.CodeStillJailed, "StillJailed: until %d ms", rec.JailedUntil)
	}
	rec.Jailed = false
	writeValidator(x.State(), rec)
	x.Emit(types.ValidatorRegistryAddress, &ValidatorUnjailedEvent{Validator: from})
	return nil
}

// validatorEvidence verifies equivocation evidence against the accused's
// registered key and slashes SlashBps of its stake (burned) and jails it,
// once per validator and round.
func (x *txCtx) validatorEvidence(in *types.ValidatorEvidence) error {
	ev, err := consensus.DecodeEvidence(in.Evidence)
	if err != nil {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %v", err)
	}
	ep, err := ReadEpoch(x.State())
	if err != nil {
		return err
	}
	if in.Epoch > ep.Number || ev.ChainID != consensus.EpochDomain(x.m.chainID, in.Epoch) {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: signing domain %d is not epoch %d's of this chain", ev.ChainID, in.Epoch)
	}
	rec, err := ReadValidator(x.State(), ev.Validator)
	if err != nil {
		return err
	}
	if rec == nil {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %s is not a registered validator", ev.Validator)
	}
	pk, err := (consensus.BLS{}).ParsePublicKey(rec.BLSKey)
	if err != nil {
		return err
	}
	if err := ev.Verify(consensus.BLS{}, pk); err != nil {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %v", err)
	}
	k := evidenceKey(ev.Validator, ev.A.Round)
	if _, seen, err := x.State().Get(k); err != nil {
		return err
	} else if seen {
		return system.Failf(system.CodeEvidenceKnown, "EvidenceKnown: already punished for round %d", ev.A.Round)
	}
	x.State().Set(k, []byte{1})
	slash := new(big.Int).Mul(rec.Stake, new(big.Int).SetUint64(x.m.p.SlashBps))
	slash.Quo(slash, big.NewInt(10_000))
	if slash.Sign() > 0 {
		if err := x.State().SubBalance(types.ValidatorRegistryAddress, slash); err != nil {
			return err
		}
		if err := x.State().AddBigRecord(state.RecordBurned, slash); err != nil {
			return err
		}
		rec.Stake.Sub(rec.Stake, slash)
	}
	x.jail(rec)
	writeValidator(x.State(), rec)
	x.Emit(types.ValidatorRegistryAddress, &ValidatorSlashedEvent{Validator: ev.Validator, Kind: ev.Kind, Round: ev.A.Round, Slashed: slash})
	return nil
}

func (x *txCtx) jail(rec *ValidatorRecord) {
	rec.Jailed = true
	rec.JailedUntil = max(rec.JailedUntil, x.Env().Timestamp+x.m.p.JailMs)
}

// Inflation (spec 002 §8.2): gross annual rate by year since genesis, in
// basis points of the genesis supply.
func inflationBps(year uint64) uint64 {
	switch year {
	case 0:
		return 800
	case 1:
		return 600
	case 2:
		return 400
	case 3:
		return 300
	}
	return 200
}

const yearMs = 365 * 24 * 3600 * 1000

// EndBlock is the registry's end-of-block work: mint the block reward to
// the epoch's members by weight, count missed votes (env.Signers is the
// signer bitmap of the QC certifying the parent) and jail at the end of a
// downtime window, and at the last block of an epoch compute the next
// epoch's set and seed.
func (m *Module) EndBlock(sx system.Tx) error {
	ep, err := ReadEpoch(sx.State())
	if err != nil || ep == nil || sx.Env().Height == 0 {
		return err
	}
	x := &txCtx{Tx: sx, m: m}
	if err := x.mintRewards(ep); err != nil {
		return fmt.Errorf("validators: rewards: %w", err)
	}
	if err := x.countDowntime(ep); err != nil {
		return fmt.Errorf("validators: downtime: %w", err)
	}
	if x.Env().Height%m.p.EpochLength == 0 {
		if err := x.nextEpoch(ep); err != nil {
			return fmt.Errorf("validators: epoch boundary: %w", err)
		}
	}
	return nil
}

func readU64(r state.Reader, k []byte) (uint64, error) {
	b, ok, err := r.Get(k)
	if err != nil || !ok || len(b) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

func (x *txCtx) mintRewards(ep *Epoch) error {
	last, err := readU64(x.State(), rewardTsKey)
	if err != nil {
		return err
	}
	gts, err := readU64(x.State(), genesisTsKey)
	if err != nil {
		return err
	}
	ts := x.Env().Timestamp
	if ts <= last {
		return nil
	}
	x.State().Set(rewardTsKey, binary.BigEndian.AppendUint64(nil, ts))
	supply, err := state.BigRecord(x.State(), state.RecordGenesisSupply)
	if err != nil {
		return err
	}
	var total uint64
	for _, m := range ep.Members {
		total += m.Weight
	}
	if total == 0 {
		return nil
	}
	// reward = supply × rate × dt / year, split by weight; the remainders
	// of the integer divisions are simply not minted.
	reward := new(big.Int).Mul(supply, new(big.Int).SetUint64(inflationBps((ts-gts)/yearMs)))
	reward.Mul(reward, new(big.Int).SetUint64(ts-last))
	reward.Quo(reward, new(big.Int).SetUint64(10_000*yearMs))
	minted := new(big.Int)
	for _, m := range ep.Members {
		share := new(big.Int).Mul(reward, new(big.Int).SetUint64(m.Weight))
		share.Quo(share, new(big.Int).SetUint64(total))
		if share.Sign() == 0 {
			continue
		}
		if err := x.State().AddBalance(m.Address, share); err != nil {
			return err
		}
		minted.Add(minted, share)
	}
	if minted.Sign() == 0 {
		return nil
	}
	return x.State().AddBigRecord(state.RecordMinted, minted)
}

func (x *txCtx) countDowntime(ep *Epoch) error {
	w := x.m.p.DowntimeWindow
	// The first block of an epoch carries the previous set's bitmap.
	if x.Env().Height > ep.StartHeight && len(x.Env().Signers) == (len(ep.Members)+7)/8 {
		for i, m := range ep.Members {
			if x.Env().Signers[i/8]&(1<<(i%8)) != 0 {
				continue
			}
			rec, err := ReadValidator(x.State(), m.Address)
			if err != nil || rec == nil {
				return err
			}
			rec.Missed++
			writeValidator(x.State(), rec)
		}
	}
	if x.Env().Height%w != 0 {
		return nil
	}
	for _, m := range ep.Members {
		rec, err := ReadValidator(x.State(), m.Address)
		if err != nil || rec == nil {
			return err
		}
		if rec.Missed == 0 {
			continue
		}
		if rec.Missed*2 > w && !rec.Jailed {
			x.jail(rec)
			x.Emit(types.ValidatorRegistryAddress, &ValidatorJailedEvent{Validator: m.Address, Missed: rec.Missed})
		}
		rec.Missed = 0
		writeValidator(x.State(), rec)
	}
	return nil
}

// nextEpoch writes the set and seed of the epoch starting at the next
// block: bonded, unjailed validators with at least the minimum stake,
// sorted by address. Pending validators become active; exiting ones leave
// (their unbonding runs from the exit). An empty result keeps the current
// members, so that the chain cannot halt itself.
func (x *txCtx) nextEpoch(ep *Epoch) error {
	next := &Epoch{Number: ep.Number + 1, StartHeight: x.Env().Height + 1}
	var recs []*ValidatorRecord
	err := x.State().Scan(ValidatorPrefix(), func(_, v []byte) error {
		var r ValidatorRecord
		if err := codec.Unmarshal(v, &r); err != nil {
			return err
		}
		recs = append(recs, &r)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(recs, func(a, b *ValidatorRecord) int { return slices.Compare(a.Address[:], b.Address[:]) })
	for _, r := range recs {
		switch r.Status {
		case ValidatorExiting:
			r.Status = ValidatorExited
			writeValidator(x.State(), r)
			continue
		case ValidatorPending:
			r.Status = ValidatorActive
			writeValidator(x.State(), r)
		case ValidatorExited:
			continue
		}
		weight := new(big.Int).Quo(r.Stake, baseUnitsPerCBY)
		if r.Jailed || r.Stake.Cmp(x.m.p.MinStake) < 0 || !weight.IsUint64() || weight.Sign() == 0 {
			continue
		}
		next.Members = append(next.Members, SetMember{Address: r.Address, BLSKey: r.BLSKey, Weight: weight.Uint64()})
	}
	if len(next.Members) == 0 {
		next.Members = ep.Members
	}
	// The seed mixes the previous seed with the beacon value this block
	// was executed with (R of its parent), known to every node.
	next.Seed = vrf.EpochSeed(ep.Seed, x.Env().Seed, next.Number)
	x.State().Set(epochKey, codec.MustMarshal(next))
	return nil
}
