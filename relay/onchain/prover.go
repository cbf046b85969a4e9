package onchain

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// Holdings is what a relay stores, as the prover needs it (relay.Node).
type Holdings interface {
	// Answer proves the challenge with seed against the relay's placement of
	// version of a volume; errors wrapping ErrNoPlacement or ErrMisstated
	// (IsRefusable) mean the commitment does not describe what the relay holds.
	Answer(ctx context.Context, vol [32]byte, version uint64, sum challenge.Summary, seed [32]byte) (*challenge.Answer, error)
}

// Prover answers the Storage Manager's availability challenges addressed to
// a relay and claims the rent of every answered challenge once its epoch is
// over, polling the node every Interval.
type Prover struct {
	Client   *sdk.Client
	Key      *ecdsa.PrivateKey // the relay's node key
	Holdings Holdings
	// Refusable reports whether an Answer error means the commitment
	// misstates the relay's holdings; such placements are refused on
	// chain (no penalty, no rent) instead of left to be missed.
	Refusable func(error) bool
	Interval  time.Duration // default 1s
	Logger    *slog.Logger
	// OnEvent, if set, is told of each answer, refusal and claim (tests,
	// metrics).
	OnEvent func(kind string, vol types.Hash, epoch uint64, err error)
	// SendMu is shared with the Registrar of the same key (see there).
	SendMu *sync.Mutex

	given  map[givenUp]bool // challenges that cannot be answered: logged once
	clock  blockClock       // the chain's block time, from the heights Step sees
	window uint64           // the response window in blocks, as Step last saw it
}

type givenUp struct {
	vol   types.Hash
	epoch uint64
}

func (p *Prover) log() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

func (p *Prover) event(kind string, vol types.Hash, epoch uint64, err error) {
	if p.OnEvent != nil {
		p.OnEvent(kind, vol, epoch, err)
	}
}

// Run polls until ctx ends: every Interval, and more often when the
// challenges' response window is shorter in time (fast blocks), so that
// at least four polls fall in every window. Node errors are logged and
// retried.
func (p *Prover) Run(ctx context.Context) error {
	iv := p.Interval
	if iv <= 0 {
		iv = time.Second
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := p.Step(ctx); err != nil && ctx.Err() == nil {
			p.log().Warn("storage challenges", "err", err)
		}
		next := min(iv, probePace) // block time not known yet
		if p.clock.per != 0 {
			next = p.clock.within(p.window, 4, iv)
		}
		t.Reset(next)
	}
}

// sent is a submitted transaction whose receipt Step waits for.
type sent struct {
	kind    string // answer | refuse | claim
	in      types.Instruction
	tx      *types.Tx
	vols    []types.Hash
	epoch   uint64
	version uint64 // of the challenged commitment (answers)
}

// Step answers every open challenge and claims every claimable epoch once.
// All transactions are submitted first (consecutive nonces) and their
// receipts awaited afterwards, so a relay with many volumes answers them all
// within the response window instead of one per block.
func (p *Prover) Step(ctx context.Context) error {
	id := types.PubkeyToAddress(p.Key.PublicKey)
	rc, err := p.Client.Relays().Challenges(ctx, id)
	if err != nil {
		return fmt.Errorf("list challenges: %w", err)
	}
	p.clock.observe(rc.Height, time.Now())
	p.window = rc.ResponseWindow
	claim := map[uint64][]types.Hash{}
	var errs []error
	var txs []sent
	submit := func(s sent) {
		tx, err := p.submit(ctx, s.in)
		if err != nil {
			for _, v := range s.vols {
				p.event(s.kind, v, s.epoch, err)
			}
			errs = append(errs, fmt.Errorf("%s: %w", s.in.InstructionKind(), err))
			return
		}
		s.tx = tx
		txs = append(txs, s)
	}
	for i := range rc.Challenges {
		c := &rc.Challenges[i]
		switch {
		case c.Status == "open" && rc.Height <= c.Deadline:
			if in, kind := p.answer(ctx, c); in != nil {
				submit(sent{kind: kind, in: in, vols: []types.Hash{c.Volume}, epoch: c.Epoch, version: c.Version})
			}
		case (c.Status == "answered" || c.Status == "superseded") && rc.Height >= (c.Epoch+1)*rc.EpochBlocks:
			claim[c.Epoch] = append(claim[c.Epoch], c.Volume)
		}
	}
	epochs := make([]uint64, 0, len(claim))
	for e := range claim {
		epochs = append(epochs, e)
	}
	sort.Slice(epochs, func(i, j int) bool { return epochs[i] < epochs[j] })
	for _, e := range epochs {
		vols := claim[e]
		sort.Slice(vols, func(i, j int) bool { return bytes.Compare(vols[i][:], vols[j][:]) < 0 })
		for len(vols) > 0 {
			n := min(len(vols), 1024)
			submit(sent{kind: "claim", in: &types.ClaimRent{Epoch: e, Volumes: vols[:n]}, vols: vols[:n], epoch: e})
			vols = vols[n:]
		}
	}
	for _, s := range txs {
		err := p.wait(ctx, s.tx)
		for _, v := range s.vols {
			p.event(s.kind, v, s.epoch, err)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s of epoch %d: %w", s.in.InstructionKind(), s.epoch, err))
			continue
		}
		switch s.kind {
		case "answer":
			p.log().Info("storage challenge answered", "volume", s.vols[0], "epoch", s.epoch)
			if pr, ok := p.Holdings.(interface {
				PrunePlacements(vol [32]byte, below uint64) error
			}); ok {
				if err := pr.PrunePlacements(s.vols[0], s.version); err != nil {
					p.log().Warn("prune old placement lists", "volume", s.vols[0], "err", err)
				}
			}
		case "claim":
			p.log().Info("rent claimed", "epoch", s.epoch, "volumes", len(s.vols))
		}
	}
	return errors.Join(errs...)
}

// answer builds the transaction for an open challenge: a proof, or a
// refusal of a placement that misstates the relay's holdings; nil when
// there is nothing valid to send.
func (p *Prover) answer(ctx context.Context, c *apitypes.ChallengeInfo) (types.Instruction, string) {
	sum := challenge.Summary{Bytes: c.Bytes, Count: c.Count, ShardsRoot: c.ShardsRoot}
	a, err := p.Holdings.Answer(ctx, c.Volume, c.Version, sum, c.Seed)
	if err != nil {
		if p.Refusable != nil && p.Refusable(err) {
			p.log().Warn("refusing a placement that misstates our holdings", "volume", c.Volume, "version", c.Version, "err", err)
			return &types.RefusePlacement{Volume: c.Volume, Version: c.Version}, "refuse"
		}
		// Corrupt or lost shard: nothing valid to send; the challenge will
		// be missed and the owner's repair rebuilds the shard.
		k := givenUp{c.Volume, c.Epoch}
		if !p.given[k] {
			if p.given == nil || len(p.given) > 10_000 {
				p.given = map[givenUp]bool{}
			}
			p.given[k] = true
			p.log().Error("cannot answer storage challenge", "volume", c.Volume, "epoch", c.Epoch, "err", err)
			p.event("unanswerable", c.Volume, c.Epoch, err)
		}
		return nil, ""
	}
	return &types.StorageProof{Volume: c.Volume, Epoch: c.Epoch, ShardID: a.Leaf.ID, ShardHash: a.Leaf.Hash, ShardSize: a.Leaf.Size,
		LeafPath: toTypes(a.LeafPath), Chunk: a.Chunk, ChunkPath: toTypes(a.ChunkPath)}, "answer"
}

func toTypes(hs []merkle.Hash) []types.Hash {
	out := make([]types.Hash, len(hs))
	for i, h := range hs {
		out[i] = types.Hash(h)
	}
	return out
}

// submit builds, signs and submits in under the key's send lock.
func (p *Prover) submit(ctx context.Context, in types.Instruction) (*types.Tx, error) {
	if p.SendMu != nil {
		p.SendMu.Lock()
		defer p.SendMu.Unlock()
	}
	return p.Client.Account(p.Key).SendSystem(ctx, types.StorageManagerAddress, in, nil)
}

// wait waits for tx's receipt and reports a failed one, or a proof the
// Storage Manager rejected, as an error.
func (p *Prover) wait(ctx context.Context, tx *types.Tx) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := p.Client.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		return err
	}
	if r.Receipt.Status != "success" {
		return fmt.Errorf("failed: %s", r.Receipt.Error)
	}
	for _, e := range r.Receipt.Events {
		if e.Topic == "ChallengeFailed" {
			return errors.New("the Storage Manager rejected the proof")
		}
	}
	return nil
}
