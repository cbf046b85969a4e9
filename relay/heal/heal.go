// Package heal is the repair service a relay daemon runs (docs/RELAY.md,
// "Self-healing"): it rebuilds the shards that relays the registry marks
// unhealthy (missed heartbeats, or flagged by failed challenges) held,
// without the volume owner. Shards are ciphertext, so any K shards of a
// stripe rebuild the others and no key is needed. The stripe maps come
// from the writers (wire.KindStripes, checked against the on-chain
// placement); for each damaged stripe exactly one healthy holder acts (the
// lowest Repairer rank), stores the rebuilt shards on healthy relays that
// hold no shard of the stripe, with relay-signed peer requests, and records
// each move on chain (repair_placement), where readers find it.
package heal

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/klauspost/reedsolomon"
)

// Errors.
var (
	// ErrStripeMap reports a stripe map that does not match the on-chain
	// placement: the volume is not healed from it.
	ErrStripeMap = errors.New("heal: stripe map does not match the placement")
	// ErrNoTarget reports that no healthy relay outside the stripe took
	// the rebuilt shard.
	ErrNoTarget = errors.New("heal: no relay took the rebuilt shard")
)

// Relay is a registered relay as the registry reports it.
type Relay struct {
	ID       [20]byte
	Addr     string
	PubKey   []byte
	Healthy  bool
	Capacity uint64
	Used     uint64
}

// Placement is a volume's on-chain placement.
type Placement struct {
	Version uint64
	Evicted bool
	Sums    map[[20]byte]challenge.Summary
}

// Move is a shard already moved by repair.
type Move struct{ Origin, Holder [20]byte }

// Chain is what the service reads from and sends to the chain
// (relay/onchain.Healer implements it).
type Chain interface {
	Relays(ctx context.Context) ([]Relay, error)
	Placement(ctx context.Context, vol [32]byte) (*Placement, error)
	Moved(ctx context.Context, vol [32]byte) (map[[32]byte]Move, error)
	// Repair sends a repair_placement and waits for its receipt.
	Repair(ctx context.Context, in *types.RepairPlacement) error
}

// Config configures a Service.
type Config struct {
	Key      *ecdsa.PrivateKey // the relay's node key
	Store    *store.Store
	Chain    Chain
	Pool     *transport.Pool
	Interval time.Duration // between passes; default 30s
	// BytesPerSecond bounds repair traffic (shards fetched and stored);
	// <= 0 is unlimited.
	BytesPerSecond int64
	// Retention is how long the objects of a volume the Storage Manager
	// evicted (unpaid rent) are kept after this relay first sees the
	// eviction; 0 keeps them. A volume funded again meanwhile is kept.
	Retention time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Report counts one pass.
type Report struct {
	Stripes       int // stripes examined
	Degraded      int // stripes with a shard on an unhealthy relay
	Rebuilt       int // shards rebuilt, stored and recorded by this relay
	Failed        int // shards this relay should have rebuilt but could not
	Unrecoverable int // stripes with fewer than K healthy shards
	Deleted       int // objects of evicted volumes deleted
}

// Service runs repair passes.
type Service struct {
	cfg  Config
	self [20]byte
	lim  *Limiter
	log  *slog.Logger
	// evicted: when this relay first saw each evicted volume (in memory:
	// a restart only lengthens the retention).
	evicted map[[32]byte]time.Time
}

// New returns a service.
func New(cfg Config) *Service {
	if cfg.Interval <= 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{evicted: map[[32]byte]time.Time{}, cfg: cfg, self: crypto.PubkeyToAddress(cfg.Key.PublicKey), lim: NewLimiter(cfg.BytesPerSecond, nil), log: cfg.Logger}
}

// Run makes a pass every Interval until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		rep, err := s.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("heal pass failed", "err", err)
		}
		if rep.Degraded > 0 || rep.Rebuilt > 0 || rep.Deleted > 0 {
			s.log.Info("heal pass", "stripes", rep.Stripes, "degraded", rep.Degraded, "rebuilt", rep.Rebuilt,
				"failed", rep.Failed, "unrecoverable", rep.Unrecoverable, "deleted", rep.Deleted)
		}
	}
}

// Pass examines every volume this relay holds a stripe map of once.
func (s *Service) Pass(ctx context.Context) (Report, error) {
	var rep Report
	relays, err := s.cfg.Chain.Relays(ctx)
	if err != nil {
		return rep, err
	}
	byID := make(map[[20]byte]Relay, len(relays))
	for _, r := range relays {
		byID[r.ID] = r
	}
	vols, err := s.cfg.Store.Volumes()
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, vol := range vols {
		if err := s.volume(ctx, vol, byID, &rep); err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			errs = append(errs, fmt.Errorf("volume %x: %w", vol[:6], err))
		}
	}
	return rep, errors.Join(errs...)
}

// latestMap reads the newest stripe map this relay holds for vol.
func (s *Service) latestMap(vol [32]byte) (*wire.StripeMap, error) {
	objs, err := s.cfg.Store.List(vol, wire.KindStripes, 0)
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	best := objs[0]
	for _, o := range objs[1:] {
		if o.Version > best.Version {
			best = o
		}
	}
	_, rc, _, err := s.cfg.Store.Get(context.Background(), vol, best.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	var sm wire.StripeMap
	if err := wire.Unmarshal(b, &sm); err != nil {
		return nil, fmt.Errorf("stripe map: %w", err)
	}
	return &sm, nil
}

// pruneMaps deletes the volume's stripe maps older than version (which
// matches the on-chain placement): they are never used again.
func (s *Service) pruneMaps(vol [32]byte, version uint64) {
	objs, err := s.cfg.Store.List(vol, wire.KindStripes, 0)
	if err != nil {
		return
	}
	for _, o := range objs {
		if o.Version < version {
			if err := s.cfg.Store.Delete(vol, o.ID); err != nil {
				s.log.Debug("heal: prune stripe map", "err", err)
			}
		}
	}
}

// leaves are each relay's placement leaves by the stripe map.
func leaves(sm *wire.StripeMap) (map[[20]byte][]challenge.Leaf, error) {
	by := map[[20]byte][]challenge.Leaf{}
	for _, st := range sm.Stripes {
		for _, sh := range st.Shards {
			by[sh.Relay] = append(by[sh.Relay], challenge.Leaf{ID: sh.ID, Hash: sh.Hash, Size: uint64(st.ShardSize)})
		}
	}
	for r, ls := range by {
		sorted, err := challenge.SortLeaves(ls)
		if err != nil {
			return nil, err
		}
		by[r] = sorted
	}
	return by, nil
}

// CheckMap verifies a stripe map against the on-chain placement: every
// relay the placement names has exactly the leaves the map gives it.
func CheckMap(sm *wire.StripeMap, pl *Placement) (map[[20]byte][]challenge.Leaf, error) {
	if pl == nil || pl.Version != sm.Version {
		return nil, fmt.Errorf("%w: map of version %d", ErrStripeMap, sm.Version)
	}
	by, err := leaves(sm)
	if err != nil {
		return nil, err
	}
	for r, want := range pl.Sums {
		got, err := challenge.Summarize(by[r])
		if err != nil || got != want {
			return nil, fmt.Errorf("%w: relay %x", ErrStripeMap, r[:4])
		}
	}
	return by, nil
}

func (s *Service) volume(ctx context.Context, vol [32]byte, byID map[[20]byte]Relay, rep *Report) error {
	pl, err := s.cfg.Chain.Placement(ctx, vol)
	if err != nil {
		return err
	}
	if done, err := s.retain(vol, pl, rep); done || err != nil {
		return err
	}
	sm, err := s.latestMap(vol)
	if err != nil || sm == nil {
		return err
	}
	if pl == nil || pl.Version != sm.Version {
		// a newer commitment whose map has not reached us
		s.log.Debug("heal: stripe map is not the placement's", "volume", fmt.Sprintf("%x", vol[:6]), "map", sm.Version, "placement", pl)
		return nil
	}
	by, err := CheckMap(sm, pl)
	if err != nil {
		return err
	}
	s.pruneMaps(vol, sm.Version)
	var moved map[[32]byte]Move
	healthy := func(id [20]byte) bool { r, ok := byID[id]; return ok && r.Healthy }
	var healthyIDs [][20]byte
	for id, r := range byID {
		if r.Healthy {
			healthyIDs = append(healthyIDs, id)
		}
	}
	sort.Slice(healthyIDs, func(i, j int) bool { return bytes.Compare(healthyIDs[i][:], healthyIDs[j][:]) < 0 })
	for si := range sm.Stripes {
		st := &sm.Stripes[si]
		rep.Stripes++
		if len(st.Shards) != int(sm.K)+int(sm.M) || len(st.Shards) == 0 {
			continue
		}
		damaged := false
		for _, sh := range st.Shards {
			damaged = damaged || !healthy(sh.Relay)
		}
		if !damaged {
			continue
		}
		if moved == nil {
			if moved, err = s.cfg.Chain.Moved(ctx, vol); err != nil {
				return err
			}
		}
		cur := make([][20]byte, len(st.Shards))
		var bad []int
		var holders [][20]byte
		in := map[[20]byte]bool{}
		for i, sh := range st.Shards {
			cur[i] = sh.Relay
			if mv, ok := moved[sh.ID]; ok && mv.Origin == sh.Relay {
				cur[i] = mv.Holder
			}
			in[cur[i]] = true
			if !healthy(cur[i]) {
				bad = append(bad, i)
			} else {
				holders = append(holders, cur[i])
			}
		}
		if len(bad) == 0 {
			continue // already healed
		}
		rep.Degraded++
		if len(holders) < int(sm.K) {
			rep.Unrecoverable++
			continue
		}
		if r, _ := Repairer(holders, st.Shards[0].ID); r != s.self {
			continue
		}
		n, err := s.rebuild(ctx, sm, st, cur, bad, in, by, pl, moved, byID, healthyIDs)
		rep.Rebuilt += n
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failed += len(bad) - n
			s.log.Warn("heal: stripe rebuild failed", "volume", fmt.Sprintf("%x", vol[:6]), "stripe", si, "err", err)
		}
	}
	return nil
}

// rebuild fetches K good shards of a stripe, reconstructs the bad ones,
// stores each on a target relay and records the move on chain.
func (s *Service) rebuild(ctx context.Context, sm *wire.StripeMap, st *wire.Stripe, cur [][20]byte, bad []int, in map[[20]byte]bool,
	by map[[20]byte][]challenge.Leaf, pl *Placement, moved map[[32]byte]Move, byID map[[20]byte]Relay, healthyIDs [][20]byte) (int, error) {
	k := int(sm.K)
	shards := make([][]byte, len(st.Shards))
	got := 0
	order := make([]int, 0, len(st.Shards))
	for i := range st.Shards { // our own shards first: no traffic
		if cur[i] == s.self {
			order = append([]int{i}, order...)
		} else {
			order = append(order, i)
		}
	}
	var ferrs []error
	for _, i := range order {
		if got >= k {
			break
		}
		if containsInt(bad, i) {
			continue
		}
		d, err := s.fetch(ctx, sm.Volume, st.Shards[i], cur[i], byID, uint64(st.ShardSize))
		if err != nil {
			ferrs = append(ferrs, err)
			continue
		}
		shards[i] = d
		got++
	}
	if got < k {
		return 0, fmt.Errorf("%d of %d shards readable: %w", got, k, errors.Join(ferrs...))
	}
	enc, err := reedsolomon.New(k, int(sm.M))
	if err != nil {
		return 0, err
	}
	if err := enc.Reconstruct(shards); err != nil {
		return 0, fmt.Errorf("reconstruct: %w", err)
	}
	done := 0
	var errs []error
	for _, i := range bad {
		sh := st.Shards[i]
		if merkle.Sum(shards[i]) != sh.Hash {
			errs = append(errs, fmt.Errorf("rebuilt shard %d does not match its hash", i))
			continue
		}
		to, err := s.place(ctx, sm.Volume, sh, shards[i], in, byID, healthyIDs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rp, err := RepairInstruction(sm, st, i, cur[i], to, by, pl, moved)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.cfg.Chain.Repair(ctx, rp); err != nil {
			errs = append(errs, fmt.Errorf("repair_placement: %w", err))
			continue
		}
		in[to] = true
		done++
	}
	return done, errors.Join(errs...)
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// fetch reads one shard, locally or from its holder, and checks its hash.
func (s *Service) fetch(ctx context.Context, vol [32]byte, sh wire.StripeShard, holder [20]byte, byID map[[20]byte]Relay, size uint64) ([]byte, error) {
	var data []byte
	if holder == s.self {
		_, rc, _, err := s.cfg.Store.Read(vol, sh.ID, 0, 0)
		if err != nil {
			return nil, err
		}
		data, err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	} else {
		if err := s.lim.Wait(ctx, int(size)); err != nil {
			return nil, err
		}
		r := byID[holder]
		ctx, cancel := transport.WithRequestTimeout(ctx, peerTimeout)
		defer cancel()
		reply, err := s.do(ctx, r, &wire.Request{Op: wire.OpGet, Kind: wire.KindShard, Volume: vol, ID: sh.ID}, nil)
		if err != nil {
			return nil, err
		}
		data, err = io.ReadAll(io.LimitReader(reply.Body, int64(size)+1))
		reply.Close()
		if err != nil {
			return nil, err
		}
	}
	if uint64(len(data)) != size || merkle.Sum(data) != sh.Hash {
		return nil, fmt.Errorf("shard %x from %x does not match the stripe map", sh.ID[:6], holder[:4])
	}
	return data, nil
}

// place stores a rebuilt shard on the first target relay that takes it.
func (s *Service) place(ctx context.Context, vol [32]byte, sh wire.StripeShard, data []byte, in map[[20]byte]bool,
	byID map[[20]byte]Relay, healthyIDs [][20]byte) ([20]byte, error) {
	var errs []error
	for _, id := range Targets(healthyIDs, in, sh.ID) {
		r := byID[id]
		if r.Capacity > 0 && r.Used+uint64(len(data)) > r.Capacity {
			continue // its last heartbeat says it is full
		}
		if err := s.lim.Wait(ctx, len(data)); err != nil {
			return id, err
		}
		pctx, cancel := transport.WithRequestTimeout(ctx, peerTimeout)
		reply, err := s.do(pctx, r, &wire.Request{Op: wire.OpPut, Kind: wire.KindShard, Volume: vol, ID: sh.ID,
			Hash: sh.Hash, Size: uint64(len(data))}, bytes.NewReader(data))
		if err != nil {
			cancel()
			errs = append(errs, err) // e.g. relay full: try the next
			continue
		}
		reply.Close()
		cancel()
		return id, nil
	}
	return [20]byte{}, fmt.Errorf("%w: %w", ErrNoTarget, errors.Join(errs...))
}

// ErrPeer reports a peer relay's refusal; ErrRelayFull a peer out of
// space (wire.StatusFull), which wraps ErrPeer too.
var (
	ErrPeer      = errors.New("heal: peer refused")
	ErrRelayFull = fmt.Errorf("%w: relay full", ErrPeer)
)

// peerTimeout bounds one peer request.
const peerTimeout = 30 * time.Second

// do sends one relay-signed peer request; the caller closes the reply.
func (s *Service) do(ctx context.Context, r Relay, req *wire.Request, body io.Reader) (*transport.Reply, error) {
	req.Relay = r.ID
	req.Time = time.Now().Unix()
	rand.Read(req.Nonce[:])
	req.Token = wire.PeerToken
	sig, err := captoken.SignRequest(s.cfg.Key, req.SigningHash())
	if err != nil {
		return nil, err
	}
	req.Sig = sig
	reply, err := s.cfg.Pool.Do(ctx, r.Addr, r.PubKey, req, body) // the pool drops a failed relay's connection
	if err != nil {
		return nil, fmt.Errorf("relay %x: %w", r.ID[:4], err)
	}
	if reply.Status != wire.StatusOK {
		reply.Close()
		base := ErrPeer
		if reply.Status == wire.StatusFull {
			base = ErrRelayFull
		}
		return nil, fmt.Errorf("%w: relay %x %s: %s (%s)", base, r.ID[:4], req.Op, reply.Status, reply.Error)
	}
	return reply, nil
}

// RepairInstruction is the repair_placement moving shard i of a stripe from
// its current holder from to the relay to. When from holds the shard by the
// owner's commitment and the commitment has a summary for it, the leaf is
// proved against that summary (by: every relay's leaves by the stripe map);
// a shard from holds by an earlier move, or that the commitment left out,
// moves without a proof.
func RepairInstruction(sm *wire.StripeMap, st *wire.Stripe, i int, from, to [20]byte, by map[[20]byte][]challenge.Leaf,
	pl *Placement, moved map[[32]byte]Move) (*types.RepairPlacement, error) {
	sh := st.Shards[i]
	rp := &types.RepairPlacement{Volume: types.Hash(sm.Volume), Version: sm.Version, From: from, To: to,
		ShardID: sh.ID, ShardHash: sh.Hash, ShardSize: uint64(st.ShardSize)}
	if mv, ok := moved[sh.ID]; ok && mv.Holder == from {
		return rp, nil
	}
	if _, ok := pl.Sums[from]; !ok {
		return rp, nil
	}
	ls := by[from]
	idx := sort.Search(len(ls), func(j int) bool { return bytes.Compare(ls[j].ID[:], sh.ID[:]) >= 0 })
	if idx == len(ls) || ls[idx].ID != sh.ID {
		return nil, fmt.Errorf("%w: shard %x is not among relay %x's leaves", ErrStripeMap, sh.ID[:6], from[:4])
	}
	path, err := challenge.LeafProof(ls, uint64(idx))
	if err != nil {
		return nil, err
	}
	rp.LeafIndex = uint64(idx)
	for _, h := range path {
		rp.LeafPath = append(rp.LeafPath, types.Hash(h))
	}
	return rp, nil
}
