package storage

import (
	"encoding/binary"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Params are the Relay Registry and Storage Manager parameters
// (docs/RELAY.md, "Challenges and billing"). Zero fields take the defaults;
// a genesis may set them under "storage".
type Params struct {
	MinRelayStake    *big.Int `json:"min_relay_stake,omitempty"`   // 100 CBY
	HeartbeatTimeout uint64   `json:"heartbeat_timeout,omitempty"` // blocks without a heartbeat before a relay is unhealthy: 60
	MaxShards        uint64   `json:"max_shards,omitempty"`        // K + M limit per volume: 32

	// EpochBlocks is the storage epoch: challenges are issued and rent is
	// reserved at every height that is a multiple of it. Default 600.
	EpochBlocks uint64 `json:"epoch_blocks,omitempty"`
	// ResponseWindow is how many blocks after its issue a challenge may be
	// answered (less than EpochBlocks). Default EpochBlocks/4.
	ResponseWindow uint64 `json:"response_window,omitempty"`
	// RentRate is the storage_rent_rate: base units per stored shard byte
	// per epoch. Default 20,000: with the default 600-block epochs at 1 s
	// blocks, about 0.09 CBY per GiB of shards a month. Shard bytes
	// already include the erasure overhead.
	RentRate *big.Int `json:"rent_rate,omitempty"`
	// GraceEpochs is how many consecutive epochs a volume may go unpaid
	// before its placement is evicted. Default 144 (a day of 600 s epochs).
	GraceEpochs uint64 `json:"grace_epochs,omitempty"`
	// ClaimEpochs is how many epochs after an epoch a relay may claim its
	// rent; unclaimed rent then returns to the escrow. Default 4.
	ClaimEpochs uint64 `json:"claim_epochs,omitempty"`
	// SlashAfter consecutive failed or missed challenges slash SlashBps
	// (basis points) of the relay's stake, burned; each further
	// consecutive failure slashes again. Defaults 3 and 1000 (10%).
	SlashAfter uint64 `json:"slash_after,omitempty"`
	SlashBps   uint64 `json:"slash_bps,omitempty"`
	// FlagEpochs is how many epochs (the failure's included) a failure
	// keeps a relay unhealthy. Default 2.
	FlagEpochs uint64 `json:"flag_epochs,omitempty"`
	// UnbondingBlocks is the delay between deregistering and the stake's
	// return, during which the stake can still be slashed. Default 1000.
	UnbondingBlocks uint64 `json:"unbonding_blocks,omitempty"`
}

func (p *Params) fill() {
	if p.MinRelayStake == nil {
		p.MinRelayStake = new(big.Int).Mul(big.NewInt(100), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	}
	if p.HeartbeatTimeout == 0 {
		p.HeartbeatTimeout = 60
	}
	if p.MaxShards == 0 {
		p.MaxShards = 32
	}
	if p.EpochBlocks == 0 {
		p.EpochBlocks = 600
	}
	if p.ResponseWindow == 0 || p.ResponseWindow >= p.EpochBlocks {
		p.ResponseWindow = max(p.EpochBlocks/4, 1)
		if p.ResponseWindow >= p.EpochBlocks {
			p.ResponseWindow = p.EpochBlocks - 1
		}
	}
	if p.RentRate == nil {
		p.RentRate = big.NewInt(20_000)
	}
	if p.GraceEpochs == 0 {
		p.GraceEpochs = 144
	}
	if p.ClaimEpochs == 0 {
		p.ClaimEpochs = 4
	}
	if p.SlashAfter == 0 {
		p.SlashAfter = 3
	}
	if p.SlashBps == 0 {
		p.SlashBps = 1000
	}
	p.SlashBps = min(p.SlashBps, 10_000)
	if p.FlagEpochs == 0 {
		p.FlagEpochs = 2
	}
	if p.UnbondingBlocks == 0 {
		p.UnbondingBlocks = 1000
	}
}

// Epoch is the storage epoch of a height.
func (p Params) Epoch(height uint64) uint64 { return height / p.EpochBlocks }

// Relay statuses.
const (
	RelayActive uint8 = 1
	RelayExited uint8 = 2
)

// Relay is a Relay Registry (0x…0B) record.
type Relay struct {
	_             struct{}      `cbor:",toarray"`
	ID            types.Address `json:"id"` // address of the node key
	Addr          string        `json:"addr"`
	PubKey        types.Bytes   `json:"pubkey"`
	Capacity      uint64        `json:"capacity"`
	Used          uint64        `json:"used"`
	Stake         *big.Int      `json:"stake"`
	RegisteredAt  uint64        `json:"registered_at"`
	LastHeartbeat uint64        `json:"last_heartbeat"`
	Status        uint8         `json:"status"`
}

// Healthy reports whether the relay is active and heard from recently.
func (r *Relay) Healthy(height, timeout uint64) bool {
	return r.Status == RelayActive && height <= r.LastHeartbeat+timeout
}

// Volume is a Storage Manager (0x…0A) record; Root/Version/Size are its
// latest StorageCommitment.
type Volume struct {
	_         struct{}      `cbor:",toarray"`
	ID        types.Hash    `json:"id"`
	Owner     types.Address `json:"owner"`
	K         uint64        `json:"k"`
	M         uint64        `json:"m"`
	Root      types.Hash    `json:"root"`
	Version   uint64        `json:"version"`
	Size      uint64        `json:"size"`
	CreatedAt uint64        `json:"created_at"`
	UpdatedAt uint64        `json:"updated_at"`
}

// RelayKey is the state key of a relay record.
func RelayKey(id types.Address) []byte {
	return state.Key(state.PrefixSystem, types.RelayRegistryAddress[:], []byte("relay/"), id[:])
}

// RelayPrefix prefixes every relay record.
func RelayPrefix() []byte {
	return state.Key(state.PrefixSystem, types.RelayRegistryAddress[:], []byte("relay/"))
}

// VolumeKey is the state key of a volume record.
func VolumeKey(id types.Hash) []byte {
	return state.Key(state.PrefixSystem, types.StorageManagerAddress[:], []byte("vol/"), id[:])
}

// RevokedKey is the state key of a revoked capability token.
func RevokedKey(vol, token types.Hash) []byte {
	return state.Key(state.PrefixSystem, types.StorageManagerAddress[:], []byte("revoked/"), vol[:], token[:])
}

// ReadRelay decodes a relay record (nil if absent).
func ReadRelay(r state.Reader, id types.Address) (*Relay, error) {
	return system.Get[Relay](r, RelayKey(id), "decode relay %s", id)
}

// ReadVolume decodes a volume record (nil if absent).
func ReadVolume(r state.Reader, id types.Hash) (*Volume, error) {
	return system.Get[Volume](r, VolumeKey(id), "decode volume %s", id)
}

func (x *txCtx) relayRegister(from types.Address, in *types.RelayRegister) error {
	pub, err := crypto.DecompressPubkey(in.PubKey)
	if err != nil {
		return system.Failf(system.CodeInvalidRelayKey, "InvalidRelayKey: %v", err)
	}
	if types.PubkeyToAddress(*pub) != from {
		return system.Failf(system.CodeInvalidRelayKey, "InvalidRelayKey: the registration must be sent by the relay's node key %s", types.PubkeyToAddress(*pub))
	}
	if in.Addr == "" || len(in.Addr) > 256 {
		return system.Failf(system.CodeInvalidRelayAddr, "InvalidRelayAddr: a QUIC host:port of at most 256 bytes is required")
	}
	rel, err := ReadRelay(x.State(), from)
	if err != nil {
		return err
	}
	stake := x.Transaction().Value()
	if rel == nil {
		rel = &Relay{ID: from, Stake: new(big.Int), RegisteredAt: x.Env().Height}
	} else if rel.Status != RelayActive {
		// Coming back cancels an unbonding: the stake still held counts.
		if err := x.cancelUnbonding(from); err != nil {
			return err
		}
		rel.RegisteredAt = x.Env().Height
	}
	rel.Stake.Add(rel.Stake, stake)
	if rel.Stake.Cmp(x.m.p.MinRelayStake) < 0 {
		return system.Failf(system.CodeInsufficientStake, "InsufficientStake: relay stake %s below the minimum %s", rel.Stake, x.m.p.MinRelayStake)
	}
	if stake.Sign() > 0 {
		if err := x.MoveValue(from, types.RelayRegistryAddress, stake); err != nil {
			return err
		}
	}
	rel.Addr, rel.PubKey, rel.Capacity = in.Addr, append(types.Bytes(nil), in.PubKey...), in.Capacity
	rel.LastHeartbeat, rel.Status = x.Env().Height, RelayActive
	x.State().Set(RelayKey(from), codec.MustMarshal(rel))
	x.Emit(types.RelayRegistryAddress, &RelayRegisteredEvent{Relay: from, Addr: in.Addr, Stake: rel.Stake})
	return nil
}

func (x *txCtx) relayHeartbeat(from types.Address, in *types.RelayHeartbeat) error {
	rel, err := ReadRelay(x.State(), from)
	if err != nil {
		return err
	}
	if rel == nil || rel.Status != RelayActive {
		return system.Failf(system.CodeNotARelay, "NotARelay: %s is not an active relay", from)
	}
	rel.Used, rel.Capacity, rel.LastHeartbeat = in.Used, in.Capacity, x.Env().Height
	x.State().Set(RelayKey(from), codec.MustMarshal(rel))
	return nil
}

func (x *txCtx) relayDeregister(from types.Address) error {
	rel, err := ReadRelay(x.State(), from)
	if err != nil {
		return err
	}
	if rel == nil || rel.Status != RelayActive {
		return system.Failf(system.CodeNotARelay, "NotARelay: %s is not an active relay", from)
	}
	// The stake stays bonded (and slashable for challenges still open)
	// for UnbondingBlocks; the end-of-block sweep then returns it.
	rel.Status = RelayExited
	x.State().Set(RelayKey(from), codec.MustMarshal(rel))
	at := x.Env().Height + x.m.p.UnbondingBlocks
	if rel.Stake.Sign() > 0 {
		st, err := ReadRelayStats(x.State(), from)
		if err != nil {
			return err
		}
		st.UnbondAt = at
		writeRelayStats(x.State(), from, st)
		x.State().Set(unbondKey(at, from), []byte{1})
	}
	x.Emit(types.RelayRegistryAddress, &RelayDeregisteredEvent{Relay: from, Stake: rel.Stake, UnbondAt: at})
	return nil
}

func volumeOwner(id types.Hash) types.Address {
	var a types.Address
	copy(a[:], id[:types.AddressLength])
	return a
}

func (x *txCtx) volumeCreate(from types.Address, in *types.VolumeCreate) error {
	if volumeOwner(in.Volume) != from {
		return system.Failf(system.CodeNotVolumeOwner, "NotVolumeOwner: volume ids start with the owner's address (%s)", from)
	}
	if in.K == 0 || in.K+in.M > x.m.p.MaxShards {
		return system.Failf(system.CodeInvalidErasure, "InvalidErasure: need 1 <= K and K + M <= %d (got K=%d M=%d)", x.m.p.MaxShards, in.K, in.M)
	}
	if v, err := ReadVolume(x.State(), in.Volume); err != nil {
		return err
	} else if v != nil {
		return system.Failf(system.CodeVolumeExists, "VolumeExists: volume %s already exists", in.Volume)
	}
	v := &Volume{ID: in.Volume, Owner: from, K: in.K, M: in.M, CreatedAt: x.Env().Height, UpdatedAt: x.Env().Height}
	x.State().Set(VolumeKey(in.Volume), codec.MustMarshal(v))
	x.Emit(types.StorageManagerAddress, &VolumeCreatedEvent{Volume: in.Volume, Owner: from, K: in.K, M: in.M})
	return nil
}

// ownedVolume loads a volume that from must own.
func (x *txCtx) ownedVolume(from types.Address, id types.Hash, what string) (*Volume, error) {
	v, err := ReadVolume(x.State(), id)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, system.Failf(system.CodeNoSuchVolume, "NoSuchVolume: volume %s does not exist", id)
	}
	if v.Owner != from {
		return nil, system.Failf(system.CodeNotVolumeOwner, "NotVolumeOwner: only %s may %s of %s", v.Owner, what, id)
	}
	return v, nil
}

func (x *txCtx) commitManifest(from types.Address, in *types.CommitManifest) error {
	v, err := x.ownedVolume(from, in.Volume, "commit manifests")
	if err != nil {
		return err
	}
	if in.Version != v.Version+1 {
		return system.Failf(system.CodeVersionConflict, "VersionConflict: volume %s is at version %d, commit is for %d", in.Volume, v.Version, in.Version)
	}
	acct, err := ReadVolumeAccount(x.State(), in.Volume)
	if err != nil {
		return err
	}
	if acct.Evicted != 0 {
		return system.Failf(system.CodeVolumeEvicted, "VolumeEvicted: volume %s was evicted at height %d for unpaid rent; fund it (volume_fund) to commit again", in.Volume, acct.Evicted)
	}
	if err := x.setPlacement(in); err != nil {
		return err
	}
	v.Root, v.Version, v.Size, v.UpdatedAt = in.Root, in.Version, in.Size, x.Env().Height
	x.State().Set(VolumeKey(in.Volume), codec.MustMarshal(v))
	x.Emit(types.StorageManagerAddress, &StorageCommitmentEvent{Volume: in.Volume, Root: in.Root, Version: in.Version, Size: in.Size, Relays: len(in.Placement)})
	return nil
}

func (x *txCtx) revokeToken(from types.Address, in *types.RevokeToken) error {
	if _, err := x.ownedVolume(from, in.Volume, "revoke tokens"); err != nil {
		return err
	}
	var h [8]byte
	binary.BigEndian.PutUint64(h[:], x.Env().Height)
	x.State().Set(RevokedKey(in.Volume, in.TokenID), h[:])
	x.Emit(types.StorageManagerAddress, &TokenRevokedEvent{Volume: in.Volume, Token: in.TokenID})
	return nil
}
