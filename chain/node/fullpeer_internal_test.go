package node

import (
	"context"
	"time"

	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// fullNodeWith opens a full node in a fresh home with the given bootstrap
// list and discovery bootnodes (discovery on).
func (o *oneValidatorNet) fullNodeWith(t *testing.T, bootstrap map[types.Address]string, bootnodes []string) *Node {
	t.Helper()
	home := t.TempDir()
	if err := o.g.Save(GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	k, err := LoadOrCreateNodeKey(NodeKeyPath(home))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Home: home, Logger: o.logger("full-" + home[len(home)-3:]),
		Network: &Network{Key: k, Full: true, Listen: "127.0.0.1:0", Bootstrap: bootstrap, Discovery: true, Bootnodes: bootnodes}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// nodeRecord waits for a running node's discovery record.
func nodeRecord(t *testing.T, n *Node) string {
	t.Helper()
	var rec string
	waitFor(t, "the node record", func() bool {
		b, err := os.ReadFile(NodeRecordPath(n.cfg.Home))
		rec = strings.TrimSpace(string(b))
		return err == nil && strings.HasPrefix(rec, "enr:")
	})
	return rec
}

// TestFullNodeSyncsFromFullNode: the validator runs no discovery; full
// node A is given its address, full node B only A's discovery record. B
// finds A, follows the chain through A (every batch verified against the
// genesis set as from a validator), then learns the validator's address
// from A's answers; a transfer submitted to B is finalized, and B counts
// A as a full peer from its bootstrap list.
func TestFullNodeSyncsFromFullNode(t *testing.T) {
	nw := newOneValidatorNet(t, 8)
	val := nw.validator(t)
	run(t, val)
	a := nw.fullNodeWith(t, map[types.Address]string{nw.addr: nw.listen}, nil)
	run(t, a)
	b := nw.fullNodeWith(t, nil, []string{nodeRecord(t, a)})
	run(t, b)

	waitFor(t, "full node B past an epoch hand-off", func() bool { return head(t, b).Height >= 8+3 })
	for hgt := uint64(1); hgt <= 8+3; hgt++ {
		var x, y *types.Block
		_ = val.Store().View(func(v *store.View) error { x, _ = v.Block(hgt); return nil })
		_ = b.Store().View(func(v *store.View) error { y, _ = v.Block(hgt); return nil })
		if x == nil || y == nil || x.Hash() != y.Hash() {
			t.Fatalf("block %d differs between the validator and full node B", hgt)
		}
	}
	waitFor(t, "B counting A as a full peer", func() bool {
		cs, _ := b.Consensus()
		for _, c := range cs.PeerCounts {
			if c.Role == RoleFull && c.Source == sourceBootstrap && c.N == 1 {
				return true
			}
		}
		return false
	})

	alice, _ := crypto.GenerateKey()
	fh, err := val.Faucet(types.PubkeyToAddress(alice.PublicKey), genesis.CBY(10))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the faucet grant on B", func() bool { return receiptOf(t, b, fh) != nil })
	h := submitTransfer(t, b, alice, types.Address{0xb0})
	waitFor(t, "B's transfer on the validator", func() bool { return receiptOf(t, val, h) != nil })
	waitFor(t, "B's transfer on B", func() bool { return receiptOf(t, b, h) != nil })
}

// TestStateSyncFromFullNode: full node A follows the validator and writes
// snapshots; full node B, given only A's discovery record, restores A's
// snapshot (verified from the genesis set alone, as from a validator) and
// then follows the chain through A.
func TestStateSyncFromFullNode(t *testing.T) {
	nw := newOneValidatorNet(t, 0)
	val := nw.validator(t)
	run(t, val)
	a := nw.fullNodeWith(t, map[types.Address]string{nw.addr: nw.listen}, nil)
	a.cfg.Network.SnapshotInterval = 10
	a.cfg.Network.SnapshotKeep = 100
	run(t, a)
	waitFor(t, "a snapshot offer on full node A", func() bool {
		o := offerNow(a)
		return o != nil && o.Manifest.Height >= 10
	})

	b := nw.fullNodeWith(t, nil, []string{nodeRecord(t, a)})
	b.cfg.Network.StateSync = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.StateSync(ctx); err != nil {
		t.Fatal(err)
	}
	hdr := head(t, b)
	if hdr.Height < 10 || hdr.Height%10 != 0 {
		t.Fatalf("restored height %d, want a snapshot's", hdr.Height)
	}
	var want *types.Header
	_ = val.Store().View(func(v *store.View) error { want, _ = v.Header(hdr.Height); return nil })
	if want == nil || want.Hash() != hdr.Hash() {
		t.Fatal("restored header is not the validator's")
	}
	run(t, b)
	target := head(t, val).Height + 3
	waitFor(t, "the state-synced node to follow", func() bool { return head(t, b).Height >= target })
}
