// Package onchain connects CBFS to the chain through the Go SDK: the Relay
// Registry (0x…0B) as a cbfs.Directory, the Storage Manager (0x…0A) as a
// cbfs.Anchor and as the capability-token revocation list relays honour,
// and the relay node's registration and heartbeats.
package onchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// Directory lists relays from the Relay Registry.
type Directory struct {
	Client *sdk.Client
}

var (
	_ cbfs.Directory    = Directory{}
	_ cbfs.ShardLocator = Directory{}
)

// MovedShards implements cbfs.ShardLocator from the Storage Manager's
// repair_placement overrides.
func (d Directory) MovedShards(ctx context.Context, vol cbfs.VolumeID) (map[[32]byte]cbfs.MovedShard, error) {
	ms, err := d.Client.Volumes().MovedShards(ctx, types.Hash(vol))
	if err != nil {
		return nil, fmt.Errorf("storage manager: %w", err)
	}
	out := make(map[[32]byte]cbfs.MovedShard, len(ms.Shards))
	for _, s := range ms.Shards {
		out[s.Shard] = cbfs.MovedShard{Origin: cbfs.RelayID(s.Origin), Holder: cbfs.RelayID(s.Holder)}
	}
	return out, nil
}

// Relays implements cbfs.Directory.
func (d Directory) Relays(ctx context.Context) ([]cbfs.RelayInfo, error) {
	rs, err := d.Client.Relays().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("relay registry: %w", err)
	}
	out := make([]cbfs.RelayInfo, 0, len(rs))
	for _, r := range rs {
		out = append(out, cbfs.RelayInfo{ID: cbfs.RelayID(r.ID), Addr: r.Addr, PubKey: cbfs.HexBytes(r.PubKey),
			Healthy: r.Healthy, Capacity: r.Capacity, Used: r.Used})
	}
	return out, nil
}

// Anchor commits manifest roots as StorageCommitments signed by the
// volume owner's key, and reads them back.
type Anchor struct {
	Client  *sdk.Client
	Key     *ecdsa.PrivateKey
	Timeout time.Duration // per commitment; default 30s
	// K and M are recorded with the Storage Manager when the first manifest
	// version of a volume is committed and the volume is not registered yet.
	K, M int
}

var _ cbfs.PlacementAnchor = (*Anchor)(nil)

// CreateVolume registers a volume with the Storage Manager and waits for it.
func (a *Anchor) CreateVolume(ctx context.Context, vol cbfs.VolumeID, k, m int) error {
	return a.send(ctx, &types.VolumeCreate{Volume: types.Hash(vol), K: uint64(k), M: uint64(m)})
}

// CommitManifest implements cbfs.Anchor: a commitment without placement
// (not challenged, not billed).
func (a *Anchor) CommitManifest(ctx context.Context, vol cbfs.VolumeID, root [32]byte, version uint64) error {
	return a.CommitPlacement(ctx, vol, root, version, 0, nil)
}

// CommitPlacement implements cbfs.PlacementAnchor: the StorageCommitment
// carries the per-relay placement summary that challenges and rent follow.
func (a *Anchor) CommitPlacement(ctx context.Context, vol cbfs.VolumeID, root [32]byte, version, size uint64, place []cbfs.RelayPlacement) error {
	if version == 1 {
		if _, err := a.Client.Volumes().Get(ctx, types.Hash(vol)); errors.Is(err, sdk.ErrNotFound) {
			k, m := a.K, a.M
			if k == 0 {
				k, m = cbfs.DefaultK, cbfs.DefaultM
			}
			if err := a.CreateVolume(ctx, vol, k, m); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	in := &types.CommitManifest{Volume: types.Hash(vol), Root: types.Hash(root), Version: version, Size: size}
	for _, p := range place {
		in.Placement = append(in.Placement, types.RelayPlacement{Relay: types.Address(p.Relay), Bytes: p.Bytes, Count: p.Count, ShardsRoot: types.Hash(p.ShardsRoot)})
	}
	err := a.send(ctx, in)
	if errors.Is(err, sdk.ErrVersionConflict) {
		return fmt.Errorf("%w: %v", cbfs.ErrConflict, err)
	}
	return err
}

// LatestManifest implements cbfs.Anchor.
func (a *Anchor) LatestManifest(ctx context.Context, vol cbfs.VolumeID) ([32]byte, uint64, error) {
	v, err := a.Client.Volumes().Get(ctx, types.Hash(vol))
	if errors.Is(err, sdk.ErrNotFound) || (err == nil && v.Version == 0) {
		return [32]byte{}, 0, fmt.Errorf("volume %x: %w", vol[:], cbfs.ErrNotFound)
	}
	if err != nil {
		return [32]byte{}, 0, err
	}
	return [32]byte(v.Root), v.Version, nil
}

// RevokeToken adds a token id to the volume's on-chain revocation list.
func (a *Anchor) RevokeToken(ctx context.Context, vol cbfs.VolumeID, token [32]byte) error {
	return a.send(ctx, &types.RevokeToken{Volume: types.Hash(vol), TokenID: types.Hash(token)})
}

// FundVolume credits value base units to the volume's rent escrow.
func (a *Anchor) FundVolume(ctx context.Context, vol cbfs.VolumeID, value *big.Int) error {
	return a.sendValue(ctx, &types.VolumeFund{Volume: types.Hash(vol)}, value)
}

func (a *Anchor) send(ctx context.Context, in types.Instruction) error {
	return a.sendValue(ctx, in, nil)
}

func (a *Anchor) sendValue(ctx context.Context, in types.Instruction, value *big.Int) error {
	timeout := a.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tx, err := a.Client.Account(a.Key).SendSystem(ctx, types.StorageManagerAddress, in, value)
	if err != nil {
		return fmt.Errorf("storage manager %s: %w", in.InstructionKind(), err)
	}
	if err := succeeded(ctx, a.Client, tx, timeout); err != nil {
		return fmt.Errorf("storage manager %s: %w", in.InstructionKind(), err)
	}
	return nil
}

// succeeded waits up to timeout for tx's receipt and reports a failed one
// as an error wrapping the receipt's failure (sdk.ReceiptErr).
func succeeded(ctx context.Context, c *sdk.Client, tx *types.Tx, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := c.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		return err
	}
	if err := sdk.ReceiptErr(r.Receipt); err != nil {
		return fmt.Errorf("failed: %w", err)
	}
	return nil
}

// Revocations is the revocation list of one volume as anchored on chain.
type Revocations struct {
	Client *sdk.Client
	Volume cbfs.VolumeID
}

// Revoked reports whether token id is revoked for the volume.
func (r Revocations) Revoked(ctx context.Context, id [32]byte) (bool, error) {
	rv, err := r.Client.Volumes().Revoked(ctx, types.Hash(r.Volume), types.Hash(id))
	if err != nil {
		return false, fmt.Errorf("revocation list: %w", err)
	}
	return rv.Revoked, nil
}

// Registrar keeps a relay registered and heartbeating.
type Registrar struct {
	Client   *sdk.Client
	Key      *ecdsa.PrivateKey // the relay's node key; it pays fees and stake
	Addr     string            // advertised QUIC host:port
	Capacity uint64
	Stake    *big.Int // staked at registration if the relay is not active yet
	Interval time.Duration
	Used     func() uint64 // current use, for heartbeats
	Logger   *slog.Logger
	// SendMu, if set, is held while a transaction from Key is built and
	// submitted, so that several senders of one key never reuse a nonce.
	SendMu *sync.Mutex
}

func (r *Registrar) sendSystem(ctx context.Context, in types.Instruction, value *big.Int) (*types.Tx, error) {
	if r.SendMu != nil {
		r.SendMu.Lock()
		defer r.SendMu.Unlock()
	}
	return r.Client.Account(r.Key).SendSystem(ctx, types.RelayRegistryAddress, in, value)
}

// ID is the relay id: the node key's address.
func (r *Registrar) ID() types.Address { return types.PubkeyToAddress(r.Key.PublicKey) }

// Register registers the relay (staking r.Stake) unless it is already
// active with the same address and capacity.
func (r *Registrar) Register(ctx context.Context) error {
	cur, err := r.Client.Relays().Get(ctx, r.ID())
	if err == nil && cur.Status == "active" && cur.Addr == r.Addr && cur.Capacity == r.Capacity {
		return nil
	}
	if err != nil && !errors.Is(err, sdk.ErrNotFound) {
		return fmt.Errorf("relay registry: %w", err)
	}
	stake := new(big.Int)
	if err != nil || cur.Status != "active" {
		stake = r.Stake
	}
	tx, err := r.sendSystem(ctx, &types.RelayRegister{Addr: r.Addr, PubKey: crypto.CompressPubkey(&r.Key.PublicKey), Capacity: r.Capacity}, stake)
	if err != nil {
		return fmt.Errorf("register relay: %w", err)
	}
	res, err := r.Client.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		return fmt.Errorf("register relay: %w", err)
	}
	if res.Receipt.Status != "success" {
		return fmt.Errorf("register relay: %s", res.Receipt.Error)
	}
	return nil
}

// Run registers, then heartbeats until ctx ends: every Interval, and more
// often when the registry's liveness window (HeartbeatTimeout blocks) is
// shorter in time, so that at least three heartbeats land in every window
// at any block time. A heartbeat counts once its receipt succeeds; one
// that cannot be sent or fails on chain is logged as an error and retried
// at the next beat. Failures never stop the relay serving.
func (r *Registrar) Run(ctx context.Context) error {
	log := r.Logger
	if log == nil {
		log = slog.Default()
	}
	interval := r.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	for {
		if err := r.Register(ctx); err == nil {
			break
		} else if ctx.Err() != nil {
			return nil
		} else {
			log.Warn("relay registration failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
	log.Info("relay registered", "id", r.ID(), "addr", r.Addr)
	var clock blockClock
	next := r.pace(ctx, &clock, interval)
	t := time.NewTimer(next)
	defer t.Stop()
	failed := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := r.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			failed++
			log.Error("relay heartbeat failed; retrying", "id", r.ID(), "consecutive", failed, "err", err)
		} else if failed > 0 && ctx.Err() == nil {
			log.Info("relay heartbeat recovered", "id", r.ID(), "after_failures", failed)
			failed = 0
		}
		t.Reset(r.pace(ctx, &clock, interval))
	}
}

// Heartbeat sends one heartbeat and waits for its receipt: an error if it
// was not included within the wait or failed on chain.
func (r *Registrar) Heartbeat(ctx context.Context) error {
	used := uint64(0)
	if r.Used != nil {
		used = r.Used()
	}
	tx, err := r.sendSystem(ctx, &types.RelayHeartbeat{Used: used, Capacity: r.Capacity}, nil)
	if err != nil {
		return fmt.Errorf("send heartbeat: %w", err)
	}
	if err := succeeded(ctx, r.Client, tx, 30*time.Second); err != nil {
		return fmt.Errorf("heartbeat %s: %w", tx.Hash(), err)
	}
	return nil
}

// pace reads the relay's record and returns the pause before the next
// heartbeat: interval, or a third of the liveness window if that is
// shorter at the chain's observed block time.
func (r *Registrar) pace(ctx context.Context, clock *blockClock, interval time.Duration) time.Duration {
	rec, err := r.Client.Relays().Get(ctx, r.ID())
	if err != nil {
		return min(interval, time.Second) // the node is down or slow: ask again soon
	}
	clock.observe(rec.Height, time.Now())
	if clock.per == 0 {
		return min(interval, probePace) // block time not known yet
	}
	return clock.within(rec.HeartbeatTimeout, 3, interval)
}

// RevocationCache answers revocation lookups from the chain with a short
// cache, so that relays do not ask the node on every request: a revocation
// takes effect within TTL of being committed.
type RevocationCache struct {
	Client *sdk.Client
	TTL    time.Duration // default 5s

	mu      sync.Mutex
	entries map[[64]byte]cachedRevocation
}

type cachedRevocation struct {
	revoked bool
	at      time.Time
}

// For returns the revocation list of one volume (for relay.Config.Revocations).
func (c *RevocationCache) For(vol cbfs.VolumeID) captoken.RevocationList {
	return cachedList{c: c, vol: vol}
}

type cachedList struct {
	c   *RevocationCache
	vol cbfs.VolumeID
}

func (l cachedList) Revoked(ctx context.Context, id [32]byte) (bool, error) {
	c := l.c
	ttl := c.TTL
	if ttl <= 0 {
		ttl = 5 * time.Second
	}
	var k [64]byte
	copy(k[:32], l.vol[:])
	copy(k[32:], id[:])
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[[64]byte]cachedRevocation{}
	}
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && (e.revoked || time.Since(e.at) < ttl) {
		return e.revoked, nil // a revocation is permanent: cache it forever
	}
	revoked, err := Revocations{Client: c.Client, Volume: l.vol}.Revoked(ctx, id)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	if len(c.entries) > 100_000 {
		c.entries = map[[64]byte]cachedRevocation{}
	}
	c.entries[k] = cachedRevocation{revoked: revoked, at: time.Now()}
	c.mu.Unlock()
	return revoked, nil
}
