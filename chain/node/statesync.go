package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// State sync (docs/CONSENSUS.md §8.10): an empty full node asks the
// validators for snapshot offers, takes the newest whose header it can
// verify from the genesis validator set (the light client's checks,
// hand-offs included), downloads and checks every chunk, rebuilds the
// state into a new database whose Merkle root must be the header's, and
// only then makes it its chain; block sync then continues from there.

// Why a snapshot is refused. Each is the serving peer's fault: it is
// scored down and another peer or snapshot is tried.
var (
	// ErrSnapshotForged: the offer's header is not certified by a QC of
	// the epoch's validators, or its records do not link to the anchor.
	ErrSnapshotForged = errors.New("node: snapshot offer does not verify")
	// ErrSnapshotChunk: a chunk does not hash to the manifest's entry or
	// does not decode.
	ErrSnapshotChunk = errors.New("node: snapshot chunk does not match its manifest")
	// ErrSnapshotStalled: a peer did not answer a snapshot request in time.
	ErrSnapshotStalled = errors.New("node: snapshot request not answered")
	// ErrNoSnapshot: no peer offered a snapshot that could be restored.
	ErrNoSnapshot = errors.New("node: no verifiable snapshot offered")
)

const (
	// snapshotStall is how long a snapshot request may go unanswered.
	snapshotStall = 5 * time.Second
	// offerWait is how long the node collects offers after asking.
	offerWait       = 3 * time.Second
	penaltySnapshot = 20
	// maxSnapshotRounds bounds how many times older snapshots are asked
	// for after every offer failed.
	maxSnapshotRounds = 4
)

// restorePath is where a restore is built before it becomes the chain.
func restorePath(home string) string { return DBPath(home) + ".restore" }

// StateSync restores the chain from a peer's snapshot if the node is a
// full node with Network.StateSync set and has nothing past its genesis;
// otherwise (or if a previous restore completed) it does nothing. Call it
// after Open and before Run or anything reading the store.
func (n *Node) StateSync(ctx context.Context) error {
	nc := n.cfg.Network
	if nc == nil || !nc.Full || !nc.StateSync {
		return nil
	}
	s := &stateSyncer{n: n, log: n.log.With("component", "statesync"), stall: snapshotStall, offerWait: offerWait, scores: newPeerScores()}
	return s.run(ctx)
}

type stateSyncer struct {
	n         *Node
	log       *slog.Logger
	stall     time.Duration
	offerWait time.Duration
	scores    *peerScores
	tr        *p2p.Transport
}

// offered is a verified offer and the peers offering that same snapshot.
type offered struct {
	offer *snapshotOffer
	peers []int
}

func (s *stateSyncer) run(ctx context.Context) error {
	n := s.n
	if done, err := s.recover(); err != nil || done {
		return err
	}
	head, err := n.store.Head()
	if err != nil {
		return err
	}
	l, err := openFinalLog(ConsensusDBPath(n.cfg.Home))
	if err != nil {
		return err
	}
	last, err := l.Last()
	l.Close()
	if err != nil {
		return err
	}
	if head.Height > 0 || last != nil {
		s.log.Info("state sync skipped: the node already has a chain", "height", head.Height)
		return nil
	}
	genesisData, err := os.ReadFile(GenesisPath(n.cfg.Home))
	if err != nil {
		return err
	}
	lc, err := sdk.LightConfigFromGenesis(genesisData)
	if err != nil {
		return err
	}
	lc.EpochLength = n.exec.Config().Validators.EpochLength
	_, set, peers, err := n.epochInForce()
	if err != nil {
		return err
	}
	if s.tr, err = p2p.New(p2p.Config{Key: n.cfg.Network.Key, Listen: ephemeralListen(n.cfg.Network.Listen), Peers: peers, Logger: s.log}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = s.tr.Run(ctx) }()
	defer func() { cancel(); s.tr.Close(); wg.Wait() }()
	asked := make([]int, set.Len())
	for i := range asked {
		asked[i] = i
	}
	asked = append(asked, s.findFullPeers(ctx, func(fn func()) { wg.Add(1); go func() { defer wg.Done(); fn() }() })...)

	below := uint64(0) // after every offer failed, ask for older snapshots
	for range maxSnapshotRounds {
		offers := s.collectOffers(ctx, asked, lc, below)
		if len(offers) == 0 && below != 0 {
			below = 0 // the older ones may have rotated away: ask afresh
			continue
		}
		if len(offers) == 0 {
			break
		}
		for _, o := range offers {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			err := s.restore(ctx, o, head)
			if err == nil {
				return nil
			}
			switch {
			case errors.Is(err, store.ErrRootMismatch):
				for _, p := range o.peers {
					s.penalize(p, penaltySnapshot, fmt.Errorf("snapshot %d refused: %w", o.offer.Manifest.Height, err))
				}
			case errors.Is(err, ErrSnapshotChunk), errors.Is(err, ErrSnapshotStalled):
				// every peer offering it failed (each scored down)
			default:
				return err
			}
			below = o.offer.Manifest.Height
		}
	}
	return fmt.Errorf("%w by %d validators and %d full nodes", ErrNoSnapshot, set.Len(), len(asked)-set.Len())
}

func (s *stateSyncer) penalize(peer, by int, err error) {
	score := s.scores.down(peer, by)
	s.log.Warn("peer scored down", "peer", peer, "score", score, "err", err)
}

// collectOffers asks every validator for its newest snapshot and returns
// the verified offers, newest first, each with the peers offering it.
func (s *stateSyncer) collectOffers(ctx context.Context, peers []int, lc sdk.LightConfig, below uint64) []*offered {
	req := codec.MustMarshal(&snapshotRequest{Offer: true, Below: below})
	answered := map[int]bool{}
	for _, p := range peers {
		sctx, cancel := context.WithTimeout(ctx, s.stall)
		if err := s.tr.Send(sctx, p, p2p.KindSnapshot, req); err != nil {
			// Unreachable (no address known, say): not waited for, and
			// not scored down, since it was never asked.
			s.log.Debug("ask for a snapshot offer", "peer", p, "err", err)
			answered[p] = true
		}
		cancel()
	}
	byHash := map[types.Hash]*offered{}
	deadline := time.NewTimer(s.offerWait)
	defer deadline.Stop()
	for len(answered) < len(peers) {
		var in p2p.Inbound
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			for _, p := range peers {
				if !answered[p] {
					s.penalize(p, penaltyStall, fmt.Errorf("%w: no snapshot offer in %v", ErrSnapshotStalled, s.offerWait))
				}
			}
			return sortOffers(byHash)
		case in = <-s.tr.Inbound():
		}
		if in.Kind != p2p.KindSnapshotReply || answered[in.From] {
			continue
		}
		answered[in.From] = true
		var rep snapshotReply
		if err := codec.Unmarshal(in.Data, &rep); err != nil {
			s.penalize(in.From, penaltyBroken, fmt.Errorf("%w: %w", ErrSyncGarbage, err))
			continue
		}
		if rep.Offer == nil {
			continue
		}
		if err := verifyOffer(lc, rep.Offer); err != nil {
			s.penalize(in.From, penaltySnapshot, err)
			continue
		}
		h := types.Keccak256(codec.MustMarshal(&rep.Offer.Manifest))
		if byHash[h] == nil {
			byHash[h] = &offered{offer: rep.Offer}
		}
		byHash[h].peers = append(byHash[h].peers, in.From)
		s.log.Info("snapshot offer verified", "peer", in.From, "height", rep.Offer.Manifest.Height, "chunks", len(rep.Offer.Manifest.Chunks))
	}
	return sortOffers(byHash)
}

func sortOffers(m map[types.Hash]*offered) []*offered {
	out := make([]*offered, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].offer.Manifest.Height > out[j].offer.Manifest.Height })
	return out
}

// verifyOffer checks an offer from the genesis validator set alone: the
// hand-offs up to the anchor's epoch, the anchor's QC and its commitment
// to a header (sdk.LightClient, as `account show --verify`) that extends
// the snapshot's by hash, and that the records run by parent hash from the
// snapshot's height to the anchor.
func verifyOffer(lc sdk.LightConfig, o *snapshotOffer) error {
	m := &o.Manifest
	if len(m.Chunks) == 0 || len(m.Chunks) > maxSnapshotChunks || m.Header.Height != m.Height || m.Height == 0 {
		return fmt.Errorf("%w: manifest of %d chunks at height %d", ErrSnapshotForged, len(m.Chunks), m.Height)
	}
	c, err := sdk.NewLightClient(lc)
	if err != nil {
		return err
	}
	for i := range o.Handoffs {
		if err := c.AddHandoff(&o.Handoffs[i]); err != nil {
			return fmt.Errorf("%w: %w", ErrSnapshotForged, err)
		}
	}
	v, err := c.Verify(validators.EpochKey(), &o.Proof)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSnapshotForged, err)
	}
	// The certified header is the manifest's or extends it by hash.
	tip, err := consensus.VerifyChain(append([]types.Header{m.Header}, o.Headers...))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSnapshotForged, err)
	}
	if tip.Hash() != v.Header.Hash() {
		return fmt.Errorf("%w: the certified header %d does not extend the manifest's %d", ErrSnapshotForged, v.Header.Height, m.Height)
	}
	rs := o.Records
	if len(rs) < 2 || rs[0].Block.Height != m.Height || rs[len(rs)-1].Block.Hash() != v.Anchor.Block.Hash() {
		return fmt.Errorf("%w: records do not run from height %d to the anchor", ErrSnapshotForged, m.Height)
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].Block.Parent != rs[i-1].Block.Hash() || rs[i].Block.Height != rs[i-1].Block.Height+1 {
			return fmt.Errorf("%w: record %d does not link to %d", ErrSnapshotForged, rs[i].Block.Height, rs[i-1].Block.Height)
		}
	}
	if rs[0].QC.BlockHash != rs[0].Block.Hash() {
		return fmt.Errorf("%w: record %d: QC of another block", ErrSnapshotForged, m.Height)
	}
	return nil
}

// fetchChunk gets chunk i from the best-scored peer of o, checking it
// against the manifest; a peer that stalls or sends a bad chunk is scored
// down and the next one asked.
func (s *stateSyncer) fetchChunk(ctx context.Context, o *offered, i uint32) ([]store.KV, error) {
	m := &o.offer.Manifest
	tried := map[int]bool{}
	for {
		peer := s.scores.pick(len(o.peers), func(j int) bool { return !tried[o.peers[j]] })
		if peer < 0 {
			return nil, fmt.Errorf("%w: chunk %d of snapshot %d: every peer offering it failed", ErrSnapshotChunk, i, m.Height)
		}
		p := o.peers[peer]
		tried[p] = true
		kvs, err := s.askChunk(ctx, p, m, i)
		if err == nil {
			s.scores.up(p)
			return kvs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		by := penaltySnapshot
		if errors.Is(err, ErrSnapshotStalled) {
			by = penaltyStall
		}
		s.penalize(p, by, err)
	}
}

func (s *stateSyncer) askChunk(ctx context.Context, p int, m *snapshotManifest, i uint32) ([]store.KV, error) {
	ctx, cancel := context.WithTimeout(ctx, s.stall)
	defer cancel()
	if err := s.tr.Send(ctx, p, p2p.KindSnapshot, codec.MustMarshal(&snapshotRequest{Height: m.Height, Chunk: i})); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshotStalled, err)
	}
	for {
		var in p2p.Inbound
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: chunk %d of snapshot %d within %v", ErrSnapshotStalled, i, m.Height, s.stall)
		case in = <-s.tr.Inbound():
		}
		if in.Kind != p2p.KindSnapshotReply || in.From != p {
			continue
		}
		var rep snapshotReply
		if err := codec.Unmarshal(in.Data, &rep); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSnapshotChunk, err)
		}
		if rep.Offer != nil || rep.Height != m.Height || rep.Chunk != i {
			continue // a late answer to an earlier request
		}
		if types.Keccak256(rep.Data) != m.Chunks[i] {
			return nil, fmt.Errorf("%w: chunk %d of snapshot %d", ErrSnapshotChunk, i, m.Height)
		}
		var kvs []store.KV
		if err := codec.Unmarshal(rep.Data, &kvs); err != nil || len(kvs) == 0 {
			return nil, fmt.Errorf("%w: chunk %d does not decode: %v", ErrSnapshotChunk, i, err)
		}
		return kvs, nil
	}
}

// restore downloads o's chunks into a new database, which becomes the
// chain only once complete and its root checked: the finalized record of
// the snapshot's height goes to the consensus log, then the database is
// renamed over the chain's (recover finishes that step after a crash).
func (s *stateSyncer) restore(ctx context.Context, o *offered, genesis *types.Header) error {
	n := s.n
	m := &o.offer.Manifest
	s.log.Info("restoring snapshot", "height", m.Height, "chunks", len(m.Chunks), "peers", len(o.peers))
	start := time.Now()
	path := restorePath(n.cfg.Home)
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	i := uint32(0)
	err := store.ImportState(path, []types.Header{*genesis, m.Header}, func() ([]store.KV, error) {
		if int(i) == len(m.Chunks) {
			return nil, nil
		}
		kvs, err := s.fetchChunk(ctx, o, i)
		i++
		return kvs, err
	})
	if err != nil {
		return err
	}
	l, err := openFinalLog(ConsensusDBPath(n.cfg.Home))
	if err != nil {
		return err
	}
	err = l.PutBase(o.offer.Records[0])
	if err == nil {
		err = recordHandoffs(l, o.offer.Handoffs)
	}
	l.Close()
	if err != nil {
		return err
	}
	if err := s.swap(); err != nil {
		return err
	}
	s.log.Info("state restored from snapshot", "height", m.Height, "state_root", m.Header.StateRoot, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// swap makes the completed restore the node's chain database.
func (s *stateSyncer) swap() error {
	n := s.n
	if err := n.store.Close(); err != nil {
		return err
	}
	if err := os.Rename(restorePath(n.cfg.Home), DBPath(n.cfg.Home)); err != nil {
		return err
	}
	st, err := store.Open(DBPath(n.cfg.Home))
	if err != nil {
		return err
	}
	n.store = st
	return nil
}

// recover finishes or discards a restore a crash interrupted: a complete
// one whose record is in the consensus log becomes the chain; anything
// else is deleted (the node then syncs again).
func (s *stateSyncer) recover() (bool, error) {
	path := restorePath(s.n.cfg.Home)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	h, err := store.ImportedHeight(path)
	if err == nil {
		l, lerr := openFinalLog(ConsensusDBPath(s.n.cfg.Home))
		if lerr != nil {
			return false, lerr
		}
		last, lerr := l.Last()
		l.Close()
		if lerr != nil {
			return false, lerr
		}
		if last != nil && last.Block.Height == h {
			s.log.Info("finishing an interrupted state restore", "height", h)
			return true, s.swap()
		}
	}
	s.log.Warn("discarding an unfinished state restore", "path", path, "err", err)
	return false, os.Remove(path)
}
