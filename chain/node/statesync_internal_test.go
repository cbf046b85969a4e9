package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// validatorWith opens the validator with the given snapshot interval.
func (o *oneValidatorNet) validatorWith(t *testing.T, snapEvery int64) *Node {
	t.Helper()
	n := o.validator(t)
	n.cfg.Network.SnapshotInterval = snapEvery
	n.cfg.Network.SnapshotKeep = 100 // none rotates away under a download
	return n
}

// stateSyncNode opens a full node in home that state-syncs.
func (o *oneValidatorNet) stateSyncNode(t *testing.T, home string) *Node {
	t.Helper()
	if _, err := os.Stat(GenesisPath(home)); err != nil {
		if err := o.g.Save(GenesisPath(home)); err != nil {
			t.Fatal(err)
		}
	}
	n := o.fullNodeAt(t, home)
	n.cfg.Network.StateSync = true
	return n
}

// snapshotNet runs a one-validator network (epochLen-block epochs, a
// snapshot every 10 heights) past height 20 with a funded account. With
// freeze it then restarts the validator with snapshots off, so the ones on
// disk stay put (tests that edit them use long epochs: a validator
// restarted at an epoch's end may not record its hand-off, §8.8).
func snapshotNet(t *testing.T, epochLen uint64, freeze bool) (*oneValidatorNet, *Node, types.Address) {
	t.Helper()
	nw := newOneValidatorNet(t, epochLen)
	val := nw.validatorWith(t, 10)
	stop := run(t, val)
	alice, _ := crypto.GenerateKey()
	aliceAddr := types.PubkeyToAddress(alice.PublicKey)
	fh, err := val.Faucet(aliceAddr, genesis.CBY(7))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the faucet grant", func() bool { return receiptOf(t, val, fh) != nil })
	waitFor(t, "two snapshots past height 20", func() bool {
		hs, _ := snapshotHeights(SnapshotDir(nw.home))
		return len(hs) >= 2 && hs[1] >= 20 && !val.snapBusy.Load()
	})
	if !freeze {
		waitFor(t, "an offer", func() bool { return offerNow(val) != nil })
		return nw, val, aliceAddr
	}
	stop()
	val = nw.validatorWith(t, -1)
	run(t, val)
	hs, _ := snapshotHeights(SnapshotDir(nw.home))
	waitFor(t, "an offer of the newest snapshot", func() bool {
		o := offerNow(val)
		return o != nil && o.Manifest.Height == hs[0]
	})
	return nw, val, aliceAddr
}

// offerNow is the validator's current snapshot offer, or nil.
func offerNow(val *Node) *snapshotOffer {
	l := val.flog.Load()
	if l == nil {
		return nil
	}
	o, err := val.snapshotOffer(l, 0)
	if err != nil {
		return nil
	}
	return o
}

func balance(t *testing.T, n *Node, a types.Address) (uint64, string) {
	t.Helper()
	var h uint64
	var bal string
	if err := n.Store().View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, a)
		h, bal = v.Height(), acc.Balance.String()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return h, bal
}

// TestStateSyncJoinsAndFollows: an empty full node restores the newest
// snapshot (at a height past an epoch hand-off, so the offer's hand-off is
// verified), holds the certified root, no block below it, and then
// follows the validator with block sync; balances match.
func TestStateSyncJoinsAndFollows(t *testing.T) {
	nw, val, alice := snapshotNet(t, 8, false)

	full := nw.stateSyncNode(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := full.StateSync(ctx); err != nil {
		t.Fatal(err)
	}
	hdr := head(t, full)
	if hdr.Height < 20 || hdr.Height%10 != 0 {
		t.Fatalf("restored height %d, want a snapshot's at or above 20", hdr.Height)
	}
	var want *types.Header
	_ = val.Store().View(func(v *store.View) error { want, _ = v.Header(hdr.Height); return nil })
	if want == nil || want.Hash() != hdr.Hash() {
		t.Fatal("restored header is not the validator's")
	}
	_ = full.Store().View(func(v *store.View) error {
		if _, err := v.Block(hdr.Height - 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("block below the snapshot: %v", err)
		}
		return nil
	})
	run(t, full)
	target := head(t, val).Height + 3
	waitFor(t, "the state-synced node to follow", func() bool { return head(t, full).Height >= target })
	h, fb := balance(t, full, alice)
	var vb string
	_ = val.Store().View(func(v *store.View) error {
		root, val, _, err := v.Prove(state.AccountKey(alice), &h)
		_ = root
		var acc state.Account
		if err == nil {
			err = codec.Unmarshal(val, &acc)
		}
		vb = acc.Balance.String()
		return err
	})
	if fb != vb || fb != genesis.CBY(7).String() {
		t.Fatalf("alice's balance at %d: full node %s, validator %s", h, fb, vb)
	}
}

// tamper rewrites the newest snapshot on the validator's disk: edit
// changes chunk 0's entries; with rehash the manifest lists the new hash
// (a consistent snapshot of the wrong state), without it the chunk no
// longer matches its manifest.
func tamper(t *testing.T, home string, rehash bool) {
	t.Helper()
	dir := SnapshotDir(home)
	hs, _ := snapshotHeights(dir)
	m, err := readManifest(dir, hs[0])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, strconv.FormatUint(hs[0], 10), chunkName(0))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kvs []store.KV
	if err := codec.Unmarshal(raw, &kvs); err != nil {
		t.Fatal(err)
	}
	kvs[0].Value = append([]byte(nil), kvs[0].Value...)
	kvs[0].Value[len(kvs[0].Value)-1] ^= 1
	raw = codec.MustMarshal(kvs)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if rehash {
		m.Chunks[0] = types.Keccak256(raw)
		if err := os.WriteFile(filepath.Join(dir, strconv.FormatUint(hs[0], 10), "manifest"), codec.MustMarshal(m), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStateSyncRefusesBadSnapshots: a snapshot whose rebuilt root does not
// match its certified header, and a chunk that does not match its
// manifest, are refused (the peer scored down), the node falls back to
// the older snapshot, and no half state is ever its chain.
func TestStateSyncRefusesBadSnapshots(t *testing.T) {
	nw, _, _ := snapshotNet(t, 1000, true)
	hs, _ := snapshotHeights(SnapshotDir(nw.home))
	for _, rehash := range []bool{true, false} {
		tamper(t, nw.home, rehash)
		home := t.TempDir()
		full := nw.stateSyncNode(t, home)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := full.StateSync(ctx)
		cancel()
		if err != nil {
			t.Fatalf("rehash %v: %v", rehash, err)
		}
		if h := head(t, full).Height; h != hs[1] {
			t.Fatalf("rehash %v: restored %d, want the older good snapshot %d", rehash, h, hs[1])
		}
		if _, err := os.Stat(restorePath(home)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("rehash %v: restore file left: %v", rehash, err)
		}
		full.Close()
	}
}

// TestStateSyncStalledPeer: a peer that does not answer a chunk request
// (its chunk file is gone) is scored down after the stall timeout and,
// with no other peer offering that snapshot, the next one is restored.
func TestStateSyncStalledPeer(t *testing.T) {
	nw, _, _ := snapshotNet(t, 1000, true)
	dir := SnapshotDir(nw.home)
	hs, _ := snapshotHeights(dir)
	if err := os.Remove(filepath.Join(dir, strconv.FormatUint(hs[0], 10), chunkName(0))); err != nil {
		t.Fatal(err)
	}
	full := nw.stateSyncNode(t, t.TempDir())
	defer full.Close()
	s := &stateSyncer{n: full, log: full.log, stall: 500 * time.Millisecond, offerWait: 30 * time.Second, scores: newPeerScores()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.run(ctx); err != nil {
		t.Fatal(err)
	}
	if h := head(t, full).Height; h != hs[1] {
		t.Fatalf("restored %d, want %d", h, hs[1])
	}
	if s.scores.of(0) >= 0 {
		t.Fatalf("stalling peer's score %d, want it scored down", s.scores.of(0))
	}
}

// TestStateSyncRefusesForgedOffers: offers whose header, records, QC or
// hand-offs do not verify from the genesis set are refused.
func TestStateSyncRefusesForgedOffers(t *testing.T) {
	nw, val, _ := snapshotNet(t, 8, false)
	var o *snapshotOffer
	waitFor(t, "an offer", func() bool { o = offerNow(val); return o != nil })
	data, _ := os.ReadFile(GenesisPath(nw.home))
	lc, err := sdk.LightConfigFromGenesis(data)
	if err != nil {
		t.Fatal(err)
	}
	lc.EpochLength = 8
	if err := verifyOffer(lc, o); err != nil {
		t.Fatalf("honest offer: %v", err)
	}
	if len(o.Handoffs) == 0 {
		t.Fatal("the offer past epoch 0 carries no hand-off")
	}
	clone := func() *snapshotOffer {
		var c snapshotOffer
		if err := codec.Unmarshal(codec.MustMarshal(o), &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	for name, forge := range map[string]func(c *snapshotOffer){
		"root":     func(c *snapshotOffer) { c.Manifest.Header.StateRoot[0] ^= 1 },
		"height":   func(c *snapshotOffer) { c.Manifest.Height++ },
		"no chunk": func(c *snapshotOffer) { c.Manifest.Chunks = nil },
		"records":  func(c *snapshotOffer) { c.Records = c.Records[1:] },
		"link":     func(c *snapshotOffer) { c.Records[0].Block.Round++ },
		"qc":       func(c *snapshotOffer) { c.Proof.Anchor[len(c.Proof.Anchor)-2] ^= 1 },
		"handoff":  func(c *snapshotOffer) { c.Handoffs = c.Handoffs[:len(c.Handoffs)-1] },
		"headers": func(c *snapshotOffer) {
			if len(c.Headers) == 0 {
				c.Headers = []types.Header{c.Manifest.Header}
			} else {
				c.Headers[0].Timestamp++
			}
		},
	} {
		c := clone()
		forge(c)
		if err := verifyOffer(lc, c); err == nil {
			t.Errorf("%s: forged offer accepted", name)
		}
	}
}

// TestStateSyncRecoversInterruptedRestore: a restore cut off before it
// completed is discarded; one completed but not yet swapped in is
// finished on the next start.
func TestStateSyncRecoversInterruptedRestore(t *testing.T) {
	nw, _, _ := snapshotNet(t, 1000, true)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	half, err := store.Open(restorePath(home)) // a crash right after the import began
	if err != nil {
		t.Fatal(err)
	}
	half.Close()
	full := nw.stateSyncNode(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := full.StateSync(ctx); err != nil {
		t.Fatal(err)
	}
	synced := head(t, full)
	if synced.Height == 0 {
		t.Fatal("not restored")
	}
	full.Close()
	// A crash after the consensus log got its record, before the rename.
	if err := os.Rename(DBPath(home), restorePath(home)); err != nil {
		t.Fatal(err)
	}
	again := nw.stateSyncNode(t, home) // writes a fresh genesis database
	defer again.Close()
	if head(t, again).Height != 0 {
		t.Fatal("setup: expected a fresh database")
	}
	if err := again.StateSync(ctx); err != nil {
		t.Fatal(err)
	}
	if h := head(t, again); h.Hash() != synced.Hash() {
		t.Fatalf("after recovery head %d, want %d", h.Height, synced.Height)
	}
}
