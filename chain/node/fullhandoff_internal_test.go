package node

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestFullNodeRecordsHandoffs: full node A follows a one-validator network
// with 8-block epochs and records each hand-off it crosses (anchor and
// proof of the next set), so it offers snapshots whose anchor lies past a
// hand-off; full node B, given only A's discovery record, restores such a
// snapshot (verified from the genesis set alone), records the offer's
// hand-offs and follows. A hand-off that is not the epoch's — another
// block, another header, another signing domain — is refused as a proof
// fault. (Before full nodes recorded hand-offs, A never had an offer past
// height 8.)
func TestFullNodeRecordsHandoffs(t *testing.T) {
	nw := newOneValidatorNet(t, 8)
	val := nw.validator(t)
	run(t, val)
	a := nw.fullNodeWith(t, map[types.Address]string{nw.addr: nw.listen}, nil)
	a.cfg.Network.SnapshotInterval = 10
	a.cfg.Network.SnapshotKeep = 100
	run(t, a)

	waitFor(t, "full node A past two hand-offs", func() bool { return head(t, a).Height >= 2*8+2 })
	la := a.flog.Load()
	for k := uint64(0); k < 2; k++ {
		waitFor(t, "A recording a hand-off", func() bool {
			h, err := la.Handoff(k)
			return err == nil && h != nil
		})
		p, err := la.handoffProof(k)
		if err != nil || p == nil {
			t.Fatalf("hand-off proof of epoch %d on A: %v, %v", k, p, err)
		}
	}
	waitFor(t, "A offering a snapshot past the first hand-off", func() bool {
		o := offerNow(a)
		return o != nil && o.Manifest.Height >= 10 && len(o.Handoffs) >= 1
	})

	t.Run("forged", func(t *testing.T) {
		good, err := la.Handoff(0)
		if err != nil || good == nil {
			t.Fatal(good, err)
		}
		// One validator in every epoch: the set in force is epoch 0's.
		_, set, _, err := a.epochInForce()
		if err != nil {
			t.Fatal(err)
		}
		p := pendingHandoff{epoch: 0, end: 8, domain: consensus.EpochDomain(a.gen.ChainID, 0), set: set}
		if err := verifyHandoff(a, p, good); err != nil {
			t.Fatalf("the recorded hand-off does not verify: %v", err)
		}
		otherBlock := *good
		otherBlock.Block.Round++
		otherEnd := p
		otherEnd.end = 7
		otherDomain := p
		otherDomain.domain = consensus.EpochDomain(a.gen.ChainID, 1)
		for name, c := range map[string]struct {
			p pendingHandoff
			a *consensus.Anchor
		}{"another block": {p, &otherBlock}, "another header": {otherEnd, good}, "another domain": {otherDomain, good}} {
			if err := verifyHandoff(a, c.p, c.a); !errors.Is(err, ErrSyncProof) {
				t.Errorf("%s: got %v, want ErrSyncProof", name, err)
			}
		}
	})

	b := nw.fullNodeWith(t, nil, []string{nodeRecord(t, a)})
	b.cfg.Network.StateSync = true
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := b.StateSync(ctx); err != nil {
		t.Fatal(err)
	}
	if hdr := head(t, b); hdr.Height < 10 {
		t.Fatalf("restored height %d, want a snapshot past the first hand-off", hdr.Height)
	}
	run(t, b)
	waitFor(t, "B holding the hand-off of epoch 0", func() bool {
		lb := b.flog.Load()
		if lb == nil {
			return false
		}
		h, err := lb.Handoff(0)
		return err == nil && h != nil
	})
	target := head(t, val).Height + 3
	waitFor(t, "the state-synced node to follow", func() bool { return head(t, b).Height >= target })
}

// TestFullNodesRelayTransactions: full node B's only validator address is
// dead; it follows the chain through full node A (found by discovery).
// A transfer submitted to B reaches the validator through A, which admits
// B's relayed batch and gossips it on, and is finalized. (Before full
// nodes relayed to each other, B's transactions went only to the dead
// address and were never included.)
func TestFullNodesRelayTransactions(t *testing.T) {
	nw := newOneValidatorNet(t, 0)
	val := nw.validator(t)
	run(t, val)
	a := nw.fullNodeWith(t, map[types.Address]string{nw.addr: nw.listen}, nil)
	run(t, a)
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := c.LocalAddr().String()
	c.Close()
	b := nw.fullNodeWith(t, map[types.Address]string{nw.addr: dead}, []string{nodeRecord(t, a)})
	run(t, b)

	alice, _ := crypto.GenerateKey()
	fh, err := val.Faucet(types.PubkeyToAddress(alice.PublicKey), genesis.CBY(10))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the faucet grant on B (synced through A)", func() bool { return receiptOf(t, b, fh) != nil })
	h := submitTransfer(t, b, alice, types.Address{0xb1})
	waitFor(t, "B's transfer on the validator", func() bool { return receiptOf(t, val, h) != nil })
	waitFor(t, "B's transfer on B", func() bool { return receiptOf(t, b, h) != nil })
}
