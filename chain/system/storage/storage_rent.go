package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Storage rent and availability challenges (docs/RELAY.md, "Challenges and
// billing"). Every value here is held in the Storage Manager's (escrow,
// reserved rent) or the Relay Registry's (stakes) account balance, so the
// supply audit holds; slashed stake is burned.

// MaxPlacementRelays bounds the relays named by one commitment.
const MaxPlacementRelays = 256

// MaxClaimVolumes bounds the volumes of one claim_rent.
const MaxClaimVolumes = 1024

// Challenge statuses.
const (
	ChallengeOpen     uint8 = 1 // issued, not answered yet
	ChallengeAnswered uint8 = 2 // proved; rent claimable after the epoch
	ChallengeFailed   uint8 = 3 // a wrong proof
	ChallengeMissed   uint8 = 4 // no answer within the window
	ChallengeClaimed  uint8 = 5 // rent paid to the relay
	ChallengeRefused  uint8 = 6 // the relay disowned the placement
	ChallengeExpired  uint8 = 7 // answered but never claimed; rent returned
	// ChallengeSuperseded: the owner committed a new version while the
	// challenge was open. The relay held the data into the epoch and may
	// have been asked to delete replaced shards since, so the rent is
	// claimable without a proof and nothing counts for or against it.
	ChallengeSuperseded uint8 = 8
)

// claimable reports whether a challenge's rent may be claimed.
func claimable(status uint8) bool {
	return status == ChallengeAnswered || status == ChallengeSuperseded
}

// ChallengeStatusName names a challenge status for the API.
func ChallengeStatusName(s uint8) string {
	switch s {
	case ChallengeOpen:
		return "open"
	case ChallengeAnswered:
		return "answered"
	case ChallengeFailed:
		return "failed"
	case ChallengeMissed:
		return "missed"
	case ChallengeClaimed:
		return "claimed"
	case ChallengeRefused:
		return "refused"
	case ChallengeExpired:
		return "expired"
	case ChallengeSuperseded:
		return "superseded"
	}
	return fmt.Sprintf("status(%d)", s)
}

// Placement is a volume's per-relay placement summary at Version (the
// latest commitment that carried one).
type Placement struct {
	_       struct{} `cbor:",toarray"`
	Version uint64
	Relays  []types.RelayPlacement // sorted by relay, unique
}

// VolumeAccount is a volume's rent escrow at the Storage Manager.
type VolumeAccount struct {
	_        struct{} `cbor:",toarray"`
	Escrow   *big.Int // available for future epochs
	Arrears  uint64   // consecutive epochs the escrow could not pay
	Evicted  uint64   // height of eviction (0: live)
	Funded   *big.Int // total ever credited
	Paid     *big.Int // total rent paid to relays
	Refunded *big.Int // escrow returned to the owner at eviction
}

// Challenge is one (epoch, volume, relay) availability challenge with the
// rent reserved for it.
type Challenge struct {
	_          struct{} `cbor:",toarray"`
	Volume     types.Hash
	Relay      types.Address
	Epoch      uint64
	Version    uint64 // commitment version challenged
	Issued     uint64 // height
	Deadline   uint64 // last height an answer is accepted
	Seed       types.Hash
	Bytes      uint64
	Count      uint64
	ShardsRoot types.Hash
	Rent       *big.Int // reserved from the escrow; paid on claim
	Status     uint8
	Closed     uint64 // height answered, failed, missed, claimed, refused or expired
}

// Summary is the relay's placement summary the challenge is against.
func (c *Challenge) Summary() challenge.Summary {
	return challenge.Summary{Bytes: c.Bytes, Count: c.Count, ShardsRoot: c.ShardsRoot}
}

// LeafIndex is the placement leaf the relay must prove.
func (c *Challenge) LeafIndex() uint64 { return challenge.LeafIndex(c.Seed, c.Count) }

// RelayStats is a relay's challenge record at the Relay Registry.
type RelayStats struct {
	_            struct{} `cbor:",toarray"`
	Answered     uint64
	Failed       uint64
	Missed       uint64
	Consecutive  uint64 // consecutive failed or missed challenges
	Reputation   uint64 // 0..MaxReputation
	FlaggedUntil uint64 // epoch until which the relay counts as unhealthy
	Earned       *big.Int
	Slashed      *big.Int
	UnbondAt     uint64 // height the stake returns (0: not unbonding)
}

// Reputation bounds and steps.
const (
	MaxReputation     = 1000
	ReputationPenalty = 200 // per failed or missed challenge
	ReputationReward  = 20  // per answered challenge
)

func smKey(parts ...[]byte) []byte {
	return state.Key(state.PrefixSystem, append([][]byte{types.StorageManagerAddress[:]}, parts...)...)
}

func rrKey(parts ...[]byte) []byte {
	return state.Key(state.PrefixSystem, append([][]byte{types.RelayRegistryAddress[:]}, parts...)...)
}

// PlacementKey is the state key of a volume's placement summary.
func PlacementKey(vol types.Hash) []byte { return smKey([]byte("place/"), vol[:]) }

// PlacementPrefix prefixes every placement summary.
func PlacementPrefix() []byte { return smKey([]byte("place/")) }

// VolumeAccountKey is the state key of a volume's escrow.
func VolumeAccountKey(vol types.Hash) []byte { return smKey([]byte("acct/"), vol[:]) }

// ChallengeKey is the state key of a challenge.
func ChallengeKey(epoch uint64, vol types.Hash, relay types.Address) []byte {
	return smKey([]byte("chal/"), system.BE8(epoch), vol[:], relay[:])
}

// ChallengeEpochPrefix prefixes the challenges of one epoch (by volume).
func ChallengeEpochPrefix(epoch uint64) []byte { return smKey([]byte("chal/"), system.BE8(epoch)) }

// RelayChallengePrefix prefixes a relay's challenge index (by epoch,
// volume); values are empty.
func RelayChallengePrefix(relay types.Address) []byte { return smKey([]byte("rchal/"), relay[:]) }

func relayChallengeKey(relay types.Address, epoch uint64, vol types.Hash) []byte {
	return smKey([]byte("rchal/"), relay[:], system.BE8(epoch), vol[:])
}

func challengeDuePrefix(height uint64) []byte { return smKey([]byte("due/"), system.BE8(height)) }

func challengeDueKey(c *Challenge) []byte {
	return smKey([]byte("due/"), system.BE8(c.Deadline), system.BE8(c.Epoch), c.Volume[:], c.Relay[:])
}

// RelayStatsKey is the state key of a relay's challenge record.
func RelayStatsKey(id types.Address) []byte { return rrKey([]byte("stats/"), id[:]) }

func unbondKey(height uint64, id types.Address) []byte {
	return rrKey([]byte("unbond/"), system.BE8(height), id[:])
}

// ReadPlacement decodes a volume's placement (nil if none).
func ReadPlacement(r state.Reader, vol types.Hash) (*Placement, error) {
	return system.Get[Placement](r, PlacementKey(vol), "decode placement %s", vol)
}

// ReadVolumeAccount decodes a volume's escrow (zero if absent).
func ReadVolumeAccount(r state.Reader, vol types.Hash) (*VolumeAccount, error) {
	a := &VolumeAccount{Escrow: new(big.Int), Funded: new(big.Int), Paid: new(big.Int), Refunded: new(big.Int)}
	b, ok, err := r.Get(VolumeAccountKey(vol))
	if err != nil || !ok {
		return a, err
	}
	if err := codec.Unmarshal(b, a); err != nil {
		return nil, fmt.Errorf("decode volume account %s: %w", vol, err)
	}
	return a, nil
}

// ReadChallenge decodes a challenge (nil if absent).
func ReadChallenge(r state.Reader, epoch uint64, vol types.Hash, relay types.Address) (*Challenge, error) {
	return system.Get[Challenge](r, ChallengeKey(epoch, vol, relay), "decode challenge")
}

// ReadRelayStats decodes a relay's challenge record (a fresh one if absent).
func ReadRelayStats(r state.Reader, id types.Address) (*RelayStats, error) {
	st := &RelayStats{Reputation: MaxReputation, Earned: new(big.Int), Slashed: new(big.Int)}
	b, ok, err := r.Get(RelayStatsKey(id))
	if err != nil || !ok {
		return st, err
	}
	if err := codec.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("decode relay stats %s: %w", id, err)
	}
	return st, nil
}

// Flagged reports whether failed challenges keep the relay unhealthy in
// epoch.
func (s *RelayStats) Flagged(epoch uint64) bool { return epoch < s.FlaggedUntil }

func writeRelayStats(o *state.Overlay, id types.Address, st *RelayStats) {
	o.Set(RelayStatsKey(id), codec.MustMarshal(st))
}

func writeChallenge(o *state.Overlay, c *Challenge) {
	o.Set(ChallengeKey(c.Epoch, c.Volume, c.Relay), codec.MustMarshal(c))
}

// RentPerEpoch is what a placement costs per epoch: shard bytes × rate.
func (p Params) RentPerEpoch(pl *Placement) *big.Int {
	var b uint64
	if pl != nil {
		for _, r := range pl.Relays {
			b += r.Bytes
		}
	}
	return new(big.Int).Mul(new(big.Int).SetUint64(b), p.RentRate)
}

// setPlacement records (or clears) the placement of a new commitment.
func (x *txCtx) setPlacement(in *types.CommitManifest) error {
	if err := x.supersede(in.Volume); err != nil {
		return err
	}
	if len(in.Placement) == 0 {
		x.State().Delete(PlacementKey(in.Volume))
		return nil
	}
	if len(in.Placement) > MaxPlacementRelays {
		return system.Failf(system.CodeInvalidPlacement, "InvalidPlacement: %d relays, at most %d", len(in.Placement), MaxPlacementRelays)
	}
	for i, p := range in.Placement {
		if i > 0 && bytes.Compare(in.Placement[i-1].Relay[:], p.Relay[:]) >= 0 {
			return system.Failf(system.CodeInvalidPlacement, "InvalidPlacement: relays must be sorted and unique")
		}
		if p.Count == 0 || p.Count > 1<<challenge.MaxProofDepth {
			return system.Failf(system.CodeInvalidPlacement, "InvalidPlacement: relay %s: shard count %d", p.Relay, p.Count)
		}
		rel, err := ReadRelay(x.State(), p.Relay)
		if err != nil {
			return err
		}
		if rel == nil || rel.Status != RelayActive {
			return system.Failf(system.CodeInvalidPlacement, "InvalidPlacement: %s is not an active relay", p.Relay)
		}
	}
	x.State().Set(PlacementKey(in.Volume), codec.MustMarshal(&Placement{Version: in.Version, Relays: in.Placement}))
	return nil
}

// supersede closes the volume's open challenges of this epoch: a new
// commitment replaces the version they are about.
func (x *txCtx) supersede(vol types.Hash) error {
	epoch := x.m.p.Epoch(x.Env().Height)
	prefix := smKey([]byte("chal/"), system.BE8(epoch), vol[:])
	var open []*Challenge
	if err := x.State().Scan(prefix, func(_, v []byte) error {
		var c Challenge
		if err := codec.Unmarshal(v, &c); err != nil {
			return err
		}
		if c.Status == ChallengeOpen {
			open = append(open, &c)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, c := range open {
		c.Status, c.Closed = ChallengeSuperseded, x.Env().Height
		writeChallenge(x.State(), c)
	}
	return nil
}

// existingVolumeAccount reads the rent account of a volume that must exist;
// a missing volume fails with NoSuchVolume.
func (x *txCtx) existingVolumeAccount(id types.Hash) (*VolumeAccount, error) {
	v, err := ReadVolume(x.State(), id)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, system.Failf(system.CodeNoSuchVolume, "NoSuchVolume: volume %s does not exist", id)
	}
	return ReadVolumeAccount(x.State(), id)
}

func (x *txCtx) volumeFund(from types.Address, in *types.VolumeFund) error {
	acct, err := x.existingVolumeAccount(in.Volume)
	if err != nil {
		return err
	}
	val := x.Transaction().Value()
	if val.Sign() <= 0 {
		return system.Failf(system.CodeNoValue, "NoValue: volume_fund credits the transaction value")
	}
	if acct.Evicted != 0 {
		// Funding an evicted volume revives it: the next commitment places
		// it again (relays may have deleted its shards meanwhile; the
		// owner's repair puts back what is missing).
		x.Emit(types.StorageManagerAddress, &VolumeRevivedEvent{Volume: in.Volume, Evicted: acct.Evicted})
		acct.Evicted, acct.Arrears = 0, 0
	}
	if err := x.MoveValue(from, types.StorageManagerAddress, val); err != nil {
		return err
	}
	acct.Escrow.Add(acct.Escrow, val)
	acct.Funded.Add(acct.Funded, val)
	x.State().Set(VolumeAccountKey(in.Volume), codec.MustMarshal(acct))
	x.Emit(types.StorageManagerAddress, &VolumeFundedEvent{Volume: in.Volume, From: from, Value: val, Escrow: acct.Escrow})
	return nil
}

func (x *txCtx) storageProof(from types.Address, in *types.StorageProof) error {
	c, err := ReadChallenge(x.State(), in.Epoch, in.Volume, from)
	if err != nil {
		return err
	}
	if c == nil {
		return system.Failf(system.CodeNoSuchChallenge, "NoSuchChallenge: relay %s has no challenge for volume %s in epoch %d", from, in.Volume, in.Epoch)
	}
	if c.Status != ChallengeOpen {
		return system.Failf(system.CodeChallengeClosed, "ChallengeClosed: the challenge is %s", ChallengeStatusName(c.Status))
	}
	ans := &challenge.Answer{
		Leaf:      challenge.Leaf{ID: in.ShardID, Hash: in.ShardHash, Size: in.ShardSize},
		LeafPath:  hashes(in.LeafPath),
		Chunk:     in.Chunk,
		ChunkPath: hashes(in.ChunkPath),
	}
	verr := challenge.Verify(c.Summary(), c.Seed, ans)
	c.Closed = x.Env().Height
	if verr != nil {
		// A wrong answer is final: it counts as a failure now (the receipt
		// succeeds and carries ChallengeFailed) and the rent goes back.
		c.Status = ChallengeFailed
		writeChallenge(x.State(), c)
		if err := x.refundRent(c); err != nil {
			return err
		}
		x.Emit(types.StorageManagerAddress, &ChallengeFailedEvent{Volume: c.Volume, Relay: from, Epoch: c.Epoch, Error: verr.Error()})
		return x.penalise(c)
	}
	c.Status = ChallengeAnswered
	writeChallenge(x.State(), c)
	st, err := ReadRelayStats(x.State(), from)
	if err != nil {
		return err
	}
	st.Answered++
	// A success ends a failure streak (slashing) but not a flag: the flag
	// runs its FlagEpochs, whatever the order of answers in a block.
	st.Consecutive = 0
	st.Reputation = min(st.Reputation+ReputationReward, MaxReputation)
	writeRelayStats(x.State(), from, st)
	x.Emit(types.StorageManagerAddress, &ChallengeAnsweredEvent{Volume: c.Volume, Relay: from, Epoch: c.Epoch})
	return nil
}

func hashes(hs []types.Hash) []merkle.Hash {
	out := make([]merkle.Hash, len(hs))
	for i, h := range hs {
		out[i] = merkle.Hash(h)
	}
	return out
}

func (x *txCtx) claimRent(from types.Address, in *types.ClaimRent) error {
	p := x.m.p
	if x.Env().Height < (in.Epoch+1)*p.EpochBlocks {
		return system.Failf(system.CodeEpochNotOver, "EpochNotOver: rent for epoch %d is claimable from height %d", in.Epoch, (in.Epoch+1)*p.EpochBlocks)
	}
	if len(in.Volumes) == 0 || len(in.Volumes) > MaxClaimVolumes {
		return system.Failf(system.CodeInvalidClaim, "InvalidClaim: between 1 and %d volumes", MaxClaimVolumes)
	}
	total := new(big.Int)
	for i, vol := range in.Volumes {
		if i > 0 && bytes.Compare(in.Volumes[i-1][:], vol[:]) >= 0 {
			return system.Failf(system.CodeInvalidClaim, "InvalidClaim: volumes must be sorted and unique")
		}
		c, err := ReadChallenge(x.State(), in.Epoch, vol, from)
		if err != nil {
			return err
		}
		if c == nil {
			return system.Failf(system.CodeNothingToClaim, "NothingToClaim: no challenge of relay %s for volume %s in epoch %d", from, vol, in.Epoch)
		}
		if !claimable(c.Status) {
			return system.Failf(system.CodeNothingToClaim, "NothingToClaim: volume %s epoch %d: the challenge is %s", vol, in.Epoch, ChallengeStatusName(c.Status))
		}
		c.Status, c.Closed = ChallengeClaimed, x.Env().Height
		writeChallenge(x.State(), c)
		acct, err := ReadVolumeAccount(x.State(), vol)
		if err != nil {
			return err
		}
		acct.Paid.Add(acct.Paid, c.Rent)
		x.State().Set(VolumeAccountKey(vol), codec.MustMarshal(acct))
		total.Add(total, c.Rent)
	}
	if total.Sign() > 0 {
		if err := x.MoveValue(types.StorageManagerAddress, from, total); err != nil {
			return err
		}
	}
	st, err := ReadRelayStats(x.State(), from)
	if err != nil {
		return err
	}
	st.Earned.Add(st.Earned, total)
	writeRelayStats(x.State(), from, st)
	x.Emit(types.StorageManagerAddress, &RentPaidEvent{Relay: from, Epoch: in.Epoch, Volumes: len(in.Volumes), Amount: total})
	return nil
}

func (x *txCtx) refusePlacement(from types.Address, in *types.RefusePlacement) error {
	pl, err := ReadPlacement(x.State(), in.Volume)
	if err != nil {
		return err
	}
	if pl == nil || pl.Version != in.Version {
		return system.Failf(system.CodeNoSuchPlacement, "NoSuchPlacement: volume %s has no placement at version %d", in.Volume, in.Version)
	}
	i := -1
	for j, r := range pl.Relays {
		if r.Relay == from {
			i = j
		}
	}
	if i < 0 {
		return system.Failf(system.CodeNoSuchPlacement, "NoSuchPlacement: relay %s holds nothing of volume %s v%d", from, in.Volume, in.Version)
	}
	pl.Relays = append(pl.Relays[:i:i], pl.Relays[i+1:]...)
	if len(pl.Relays) == 0 {
		x.State().Delete(PlacementKey(in.Volume))
	} else {
		x.State().Set(PlacementKey(in.Volume), codec.MustMarshal(pl))
	}
	// An open challenge of this epoch closes without pay and without
	// penalty: the relay declared it does not hold the data.
	c, err := ReadChallenge(x.State(), x.m.p.Epoch(x.Env().Height), in.Volume, from)
	if err != nil {
		return err
	}
	if c != nil && c.Status == ChallengeOpen && c.Version == in.Version {
		c.Status, c.Closed = ChallengeRefused, x.Env().Height
		writeChallenge(x.State(), c)
		if err := x.refundRent(c); err != nil {
			return err
		}
	}
	x.Emit(types.StorageManagerAddress, &PlacementRefusedEvent{Volume: in.Volume, Version: in.Version, Relay: from})
	return nil
}

// refundRent returns a challenge's reserved rent to the volume's escrow.
func (x *txCtx) refundRent(c *Challenge) error {
	if c.Rent.Sign() == 0 {
		return nil
	}
	acct, err := ReadVolumeAccount(x.State(), c.Volume)
	if err != nil {
		return err
	}
	if acct.Evicted != 0 {
		// Rent still reserved when the volume was evicted goes to the owner.
		v, err := ReadVolume(x.State(), c.Volume)
		if err != nil {
			return err
		}
		if v != nil {
			if err := x.MoveValue(types.StorageManagerAddress, v.Owner, c.Rent); err != nil {
				return err
			}
			acct.Refunded.Add(acct.Refunded, c.Rent)
		}
	} else {
		acct.Escrow.Add(acct.Escrow, c.Rent)
	}
	x.State().Set(VolumeAccountKey(c.Volume), codec.MustMarshal(acct))
	return nil
}

// penalise records a failed or missed challenge: reputation cut, relay
// flagged (clients stop placing on it and repair away from it), and from
// SlashAfter consecutive failures on a slash of SlashBps of the stake.
func (x *txCtx) penalise(c *Challenge) error {
	p := x.m.p
	st, err := ReadRelayStats(x.State(), c.Relay)
	if err != nil {
		return err
	}
	if c.Status == ChallengeFailed {
		st.Failed++
	} else {
		st.Missed++
	}
	st.Consecutive++
	st.Reputation -= min(st.Reputation, ReputationPenalty)
	st.FlaggedUntil = max(st.FlaggedUntil, p.Epoch(x.Env().Height)+p.FlagEpochs)
	if st.Consecutive >= p.SlashAfter {
		rel, err := ReadRelay(x.State(), c.Relay)
		if err != nil {
			return err
		}
		if rel != nil && rel.Stake.Sign() > 0 {
			cut := new(big.Int).Mul(rel.Stake, new(big.Int).SetUint64(p.SlashBps))
			cut.Quo(cut, big.NewInt(10_000))
			if cut.Sign() > 0 {
				if err := x.State().SubBalance(types.RelayRegistryAddress, cut); err != nil {
					return err
				}
				if err := x.State().AddBigRecord(state.RecordBurned, cut); err != nil {
					return err
				}
				rel.Stake.Sub(rel.Stake, cut)
				x.State().Set(RelayKey(c.Relay), codec.MustMarshal(rel))
				st.Slashed.Add(st.Slashed, cut)
				x.Emit(types.RelayRegistryAddress, &RelaySlashedEvent{Relay: c.Relay, Amount: cut, Consecutive: st.Consecutive})
			}
		}
	}
	writeRelayStats(x.State(), c.Relay, st)
	return nil
}

// cancelUnbonding stops a pending stake return (the relay re-registered).
func (x *txCtx) cancelUnbonding(id types.Address) error {
	st, err := ReadRelayStats(x.State(), id)
	if err != nil {
		return err
	}
	if st.UnbondAt != 0 {
		x.State().Delete(unbondKey(st.UnbondAt, id))
		st.UnbondAt = 0
		writeRelayStats(x.State(), id, st)
	}
	return nil
}

// EndBlock is the end-of-block step of the Storage Manager and the
// Relay Registry: challenges whose window ends here are closed as missed,
// stakes whose unbonding ends here are returned, and at an epoch boundary
// old challenge records expire and the new epoch's rent is reserved and its
// challenges issued. Events go nowhere (there is no receipt); the API shows
// the records.
func (m *Module) EndBlock(sx system.Tx) error {
	h := sx.Env().Height
	if h == 0 {
		return nil
	}
	x := &txCtx{Tx: sx, m: m}
	if err := x.closeMissed(h); err != nil {
		return fmt.Errorf("storage: close missed challenges: %w", err)
	}
	if err := x.returnStakes(h); err != nil {
		return fmt.Errorf("storage: return stakes: %w", err)
	}
	p := m.p
	if h%p.EpochBlocks != 0 {
		return nil
	}
	epoch := p.Epoch(h)
	if epoch > p.ClaimEpochs+1 {
		if err := x.expireEpoch(epoch - p.ClaimEpochs - 1); err != nil {
			return fmt.Errorf("storage: expire epoch: %w", err)
		}
	}
	if err := x.issueChallenges(epoch); err != nil {
		return fmt.Errorf("storage: issue challenges for epoch %d: %w", epoch, err)
	}
	return nil
}

func (x *txCtx) closeMissed(h uint64) error {
	prefix := challengeDuePrefix(h)
	ks, err := system.ScanKeys(x.State(), prefix)
	if err != nil {
		return err
	}
	for _, k := range ks {
		x.State().Delete(k)
		rest := k[len(prefix):] // epoch, volume, relay
		if len(rest) != 8+32+20 {
			return fmt.Errorf("malformed due key %x", k)
		}
		epoch := binary.BigEndian.Uint64(rest)
		c, err := ReadChallenge(x.State(), epoch, types.Hash(rest[8:40]), types.Address(rest[40:]))
		if err != nil {
			return err
		}
		if c == nil || c.Status != ChallengeOpen {
			continue
		}
		c.Status, c.Closed = ChallengeMissed, h
		writeChallenge(x.State(), c)
		if err := x.refundRent(c); err != nil {
			return err
		}
		if err := x.penalise(c); err != nil {
			return err
		}
	}
	return nil
}

func (x *txCtx) returnStakes(h uint64) error {
	prefix := rrKey([]byte("unbond/"), system.BE8(h))
	ks, err := system.ScanKeys(x.State(), prefix)
	if err != nil {
		return err
	}
	for _, k := range ks {
		x.State().Delete(k)
		id := types.Address(k[len(prefix):])
		rel, err := ReadRelay(x.State(), id)
		if err != nil {
			return err
		}
		if rel == nil || rel.Status == RelayActive || rel.Stake.Sign() == 0 {
			continue
		}
		if err := x.MoveValue(types.RelayRegistryAddress, id, rel.Stake); err != nil {
			return err
		}
		rel.Stake = new(big.Int)
		x.State().Set(RelayKey(id), codec.MustMarshal(rel))
		st, err := ReadRelayStats(x.State(), id)
		if err != nil {
			return err
		}
		st.UnbondAt = 0
		writeRelayStats(x.State(), id, st)
	}
	return nil
}

// expireEpoch returns the unclaimed rent of an epoch past its claim window
// and deletes the epoch's challenge records.
func (x *txCtx) expireEpoch(epoch uint64) error {
	prefix := ChallengeEpochPrefix(epoch)
	var cs []Challenge
	if err := x.State().Scan(prefix, func(_, v []byte) error {
		var c Challenge
		if err := codec.Unmarshal(v, &c); err != nil {
			return err
		}
		cs = append(cs, c)
		return nil
	}); err != nil {
		return err
	}
	for i := range cs {
		c := &cs[i]
		if claimable(c.Status) {
			if err := x.refundRent(c); err != nil {
				return err
			}
		}
		x.State().Delete(ChallengeKey(c.Epoch, c.Volume, c.Relay))
		x.State().Delete(relayChallengeKey(c.Relay, c.Epoch, c.Volume))
	}
	return nil
}

// issueChallenges reserves each placed volume's rent for epoch and issues
// one challenge per (volume, relay); a volume whose escrow cannot pay goes
// into arrears, and past the grace period its placement is evicted.
func (x *txCtx) issueChallenges(epoch uint64) error {
	p := x.m.p
	type placed struct {
		vol types.Hash
		pl  Placement
	}
	var all []placed
	prefix := PlacementPrefix()
	if err := x.State().Scan(prefix, func(k, v []byte) error {
		var pl Placement
		if err := codec.Unmarshal(v, &pl); err != nil {
			return err
		}
		all = append(all, placed{types.Hash(k[len(prefix):]), pl})
		return nil
	}); err != nil {
		return err
	}
	h := x.Env().Height
	for _, it := range all {
		acct, err := ReadVolumeAccount(x.State(), it.vol)
		if err != nil {
			return err
		}
		// Unpaid epochs are charged when the volume pays again, so a
		// volume cannot skip rent by funding only before the grace ends.
		periods := new(big.Int).SetUint64(acct.Arrears + 1)
		due := new(big.Int).Mul(p.RentPerEpoch(&it.pl), periods)
		if acct.Escrow.Cmp(due) < 0 {
			acct.Arrears++
			if acct.Arrears > p.GraceEpochs {
				if err := x.evict(it.vol, acct); err != nil {
					return err
				}
				continue
			}
			x.State().Set(VolumeAccountKey(it.vol), codec.MustMarshal(acct))
			continue
		}
		acct.Escrow.Sub(acct.Escrow, due)
		acct.Arrears = 0
		x.State().Set(VolumeAccountKey(it.vol), codec.MustMarshal(acct))
		for _, r := range it.pl.Relays {
			rent := new(big.Int).Mul(new(big.Int).SetUint64(r.Bytes), p.RentRate)
			rent.Mul(rent, periods)
			c := &Challenge{Volume: it.vol, Relay: r.Relay, Epoch: epoch, Version: it.pl.Version, Issued: h,
				Deadline: h + p.ResponseWindow, Seed: challenge.Seed(x.Env().Seed, it.vol, r.Relay, epoch),
				Bytes: r.Bytes, Count: r.Count, ShardsRoot: r.ShardsRoot, Rent: rent, Status: ChallengeOpen}
			writeChallenge(x.State(), c)
			x.State().Set(relayChallengeKey(r.Relay, epoch, it.vol), []byte{1})
			x.State().Set(challengeDueKey(c), []byte{1})
		}
	}
	return nil
}

// evict drops a volume's placement after the grace period and returns what
// is left of its escrow to the owner; the volume takes no further
// commitments or funding.
func (x *txCtx) evict(vol types.Hash, acct *VolumeAccount) error {
	v, err := ReadVolume(x.State(), vol)
	if err != nil {
		return err
	}
	x.State().Delete(PlacementKey(vol))
	if err := x.clearMoved(vol); err != nil {
		return err
	}
	acct.Evicted = x.Env().Height
	if acct.Escrow.Sign() > 0 && v != nil {
		if err := x.MoveValue(types.StorageManagerAddress, v.Owner, acct.Escrow); err != nil {
			return err
		}
		acct.Refunded.Add(acct.Refunded, acct.Escrow)
		acct.Escrow = new(big.Int)
	}
	x.State().Set(VolumeAccountKey(vol), codec.MustMarshal(acct))
	return nil
}
