package onchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/heal"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// Healer is the chain side of the relay repair service (heal.Chain): the
// Relay Registry's health, the Storage Manager's placements and moved
// shards, and repair_placement transactions signed by the relay key.
type Healer struct {
	Client *sdk.Client
	Key    *ecdsa.PrivateKey
	// SendMu is shared with the Registrar and Prover of the same key.
	SendMu *sync.Mutex
}

var _ heal.Chain = (*Healer)(nil)

// Relays implements heal.Chain.
func (h *Healer) Relays(ctx context.Context) ([]heal.Relay, error) {
	rs, err := h.Client.Relays().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("relay registry: %w", err)
	}
	out := make([]heal.Relay, 0, len(rs))
	for _, r := range rs {
		out = append(out, heal.Relay{ID: r.ID, Addr: r.Addr, PubKey: r.PubKey, Healthy: r.Healthy, Capacity: r.Capacity, Used: r.Used})
	}
	return out, nil
}

// Placement implements heal.Chain.
func (h *Healer) Placement(ctx context.Context, vol [32]byte) (*heal.Placement, error) {
	v, err := h.Client.Volumes().Get(ctx, types.Hash(vol))
	if errors.Is(err, sdk.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage manager: %w", err)
	}
	p := &heal.Placement{Sums: map[[20]byte]challenge.Summary{}}
	if v.Rent != nil && v.Rent.Evicted != 0 {
		p.Evicted = true
	}
	for _, r := range v.Placement {
		p.Version = r.Version
		p.Sums[r.Relay] = challenge.Summary{Bytes: r.Bytes, Count: r.Count, ShardsRoot: r.ShardsRoot}
	}
	return p, nil
}

// Moved implements heal.Chain.
func (h *Healer) Moved(ctx context.Context, vol [32]byte) (map[[32]byte]heal.Move, error) {
	ms, err := h.Client.Volumes().MovedShards(ctx, types.Hash(vol))
	if err != nil {
		return nil, fmt.Errorf("storage manager: %w", err)
	}
	out := make(map[[32]byte]heal.Move, len(ms.Shards))
	for _, s := range ms.Shards {
		out[s.Shard] = heal.Move{Origin: s.Origin, Holder: s.Holder}
	}
	return out, nil
}

// Repair implements heal.Chain: it sends the repair_placement and waits
// for a successful receipt.
func (h *Healer) Repair(ctx context.Context, in *types.RepairPlacement) error {
	tx, err := func() (*types.Tx, error) {
		if h.SendMu != nil {
			h.SendMu.Lock()
			defer h.SendMu.Unlock()
		}
		return h.Client.Account(h.Key).SendSystem(ctx, types.StorageManagerAddress, in, nil)
	}()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := h.Client.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		return err
	}
	if r.Receipt.Status != "success" {
		return fmt.Errorf("%w: %s", ErrRejected, r.Receipt.Error)
	}
	return nil
}

// ErrRejected reports a transaction the chain executed as failed.
var ErrRejected = errors.New("onchain: transaction failed")

// PeerCache answers relay.Config.Peers from the Relay Registry, reusing a
// listing for TTL (default 5s).
type PeerCache struct {
	Client *sdk.Client
	TTL    time.Duration

	mu     sync.Mutex
	at     time.Time
	active map[[20]byte]bool
}

// Active reports whether addr is an active registered relay.
func (p *PeerCache) Active(ctx context.Context, addr [20]byte) (bool, error) {
	ttl := p.TTL
	if ttl <= 0 {
		ttl = 5 * time.Second
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active == nil || time.Since(p.at) > ttl || (!p.active[addr] && time.Since(p.at) > time.Second) {
		rs, err := p.Client.Relays().List(ctx)
		if err != nil {
			if p.active != nil {
				return p.active[addr], nil
			}
			return false, fmt.Errorf("relay registry: %w", err)
		}
		p.active, p.at = map[[20]byte]bool{}, time.Now()
		for _, r := range rs {
			if r.Status == "active" {
				p.active[r.ID] = true
			}
		}
	}
	return p.active[addr], nil
}
