package mempool

import (
	"crypto/ecdsa"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestGappedFloodLeavesRoomForExecutable is the regression test of the
// bricked pool (issue 14): senders whose nonce 0 never arrives fill the
// pool with later nonces at the going fee; a new executable transaction at
// that same fee must still be admitted and selected for the next block.
func TestGappedFloodLeavesRoomForExecutable(t *testing.T) {
	p := New(Config{MaxTotal: 400})
	const senders, perSender = 12, 40 // 480 gapped transactions offered, more than the pool holds
	for range senders {
		k, _ := crypto.GenerateKey()
		for n := uint64(1); n <= perSender; n++ {
			p.Add(mk(t, k, n, 20, 1), nil, rich(), bf) // refusals are fine; the pool must stay usable
		}
	}
	zero := func(types.Address) (uint64, error) { return 0, nil }
	if got, _ := p.Select(zero, bf, 10_000); len(got) != 0 {
		t.Fatalf("%d gapped transactions selected", len(got))
	}
	// Ordinary users at the going fee: all admitted, all selected.
	var want []*types.Tx
	for range 5 {
		k, _ := crypto.GenerateKey()
		for n := uint64(0); n < 3; n++ {
			tx := mk(t, k, n, 20, 1)
			if _, err := p.Add(tx, nil, rich(), bf); err != nil {
				t.Fatalf("executable transaction refused by a pool of %d gapped ones: %v", p.Len(), err)
			}
			want = append(want, tx)
		}
	}
	got, err := p.Select(zero, bf, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("selected %d, want the %d executable transactions", len(got), len(want))
	}
}

// TestRejectedNonceDoesNotStrandItsSuccessors: a sender's nonce 0 is
// dropped after execution refused it, so its nonces 1..n can never run.
// They must not hold the pool: new executable transactions evict them.
func TestRejectedNonceDoesNotStrandItsSuccessors(t *testing.T) {
	p := New(Config{MaxTotal: 128})
	var first []types.Hash
	keys := make([]*ecdsa.PrivateKey, 4)
	for i := range keys {
		keys[i], _ = crypto.GenerateKey()
		for n := uint64(0); n < 32; n++ {
			tx := mk(t, keys[i], n, 20, 1)
			if _, err := p.Add(tx, nil, rich(), bf); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				first = append(first, tx.Hash())
			}
		}
	}
	// Execution refused every sender's nonce 0; the block did not advance their nonces.
	p.Remove(first...)
	if err := p.Prune(func(types.Address) (uint64, error) { return 0, nil }); err != nil {
		t.Fatal(err)
	}
	k, _ := crypto.GenerateKey()
	for n := uint64(0); n < 20; n++ {
		if _, err := p.Add(mk(t, k, n, 20, 1), nil, rich(), bf); err != nil {
			t.Fatalf("nonce %d refused by a pool of %d stranded transactions: %v", n, p.Len(), err)
		}
	}
}

// TestGappedBoundsAndExpiry: gapped transactions are bounded per sender and
// overall, and expire after GapLifetime; executable ones are not touched.
func TestGappedBoundsAndExpiry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	p := New(Config{MaxGappedPerAccount: 3, MaxGapped: 5, GapLifetime: time.Minute, Now: func() time.Time { return now }})
	a, _ := crypto.GenerateKey()
	b, _ := crypto.GenerateKey()
	for n := uint64(2); n < 5; n++ {
		if _, err := p.Add(mk(t, a, n, 20, 1), nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Add(mk(t, a, 5, 20, 1), nil, rich(), bf); !errors.Is(err, ErrGapFull) {
		t.Fatalf("per-sender gap bound: %v", err)
	}
	// Executable transactions of the same sender are not bounded by it.
	if _, err := p.Add(mk(t, a, 0, 20, 1), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Second)
	for n := uint64(1); n < 3; n++ {
		if _, err := p.Add(mk(t, b, n, 20, 1), nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Add(mk(t, b, 3, 20, 1), nil, rich(), bf); !errors.Is(err, ErrGapFull) {
		t.Fatalf("overall gap bound: %v", err)
	}
	if p.Gapped() != 5 || p.Len() != 6 {
		t.Fatalf("gapped %d, total %d", p.Gapped(), p.Len())
	}
	// a's gapped ones expire a minute after they became gapped; b's stay.
	now = now.Add(31 * time.Second)
	zero := func(types.Address) (uint64, error) { return 0, nil }
	if err := p.Prune(zero); err != nil {
		t.Fatal(err)
	}
	if p.Gapped() != 2 || p.Len() != 3 {
		t.Fatalf("after expiry: gapped %d, total %d", p.Gapped(), p.Len())
	}
	// Closing b's gap makes its transactions executable: no longer gapped.
	if _, err := p.Add(mk(t, b, 0, 20, 1), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	if p.Gapped() != 0 {
		t.Fatalf("gap closed but %d still gapped", p.Gapped())
	}
	if got, _ := p.Select(zero, bf, 100); len(got) != 4 {
		t.Fatalf("selected %d, want a0, b0, b1, b2", len(got))
	}
}

// TestFullPoolEvictsStuckBeforeCheapest: with no gapped transactions, an
// executable tail that cannot pay the basefee goes before a paying one.
func TestFullPoolEvictsStuckBeforeCheapest(t *testing.T) {
	p := New(Config{MaxTotal: 2})
	a, _ := crypto.GenerateKey()
	b, _ := crypto.GenerateKey()
	c, _ := crypto.GenerateKey()
	stuck := mk(t, a, 0, 5, 0) // max fee 5 < basefee 10
	if _, err := p.Add(stuck, nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Add(mk(t, b, 0, 20, 1), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	dropped, err := p.Add(mk(t, c, 0, 20, 1), nil, rich(), bf)
	if err != nil || dropped == nil || *dropped != stuck.Hash() {
		t.Fatalf("want the stuck transaction evicted: %v %v", dropped, err)
	}
	// Now full of paying transactions at the going fee: an equal newcomer is refused cheaply.
	d, _ := crypto.GenerateKey()
	if _, err := p.Add(mk(t, d, 0, 20, 1), nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("equal fee at a full pool: %v", err)
	}
}

// TestRefusesMatchesAdd: the pre-signature check refuses only what Add
// would refuse at a full pool, and never while something gapped or stuck
// could be evicted.
func TestRefusesMatchesAdd(t *testing.T) {
	p := New(Config{MaxTotal: 3})
	for range 3 {
		k, _ := crypto.GenerateKey()
		if _, err := p.Add(mk(t, k, 0, 20, 1), nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	k, _ := crypto.GenerateKey()
	same, richer := mk(t, k, 0, 20, 1), mk(t, k, 0, 40, 20)
	if !p.Refuses(same, nil, bf) {
		t.Fatal("an equal fee at a full pool is not refused early")
	}
	if _, err := p.Add(same, nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("Add disagrees: %v", err)
	}
	if p.Refuses(richer, nil, bf) {
		t.Fatal("a higher fee is refused early")
	}
	if _, err := p.Add(richer, nil, rich(), bf); err != nil {
		t.Fatalf("a higher fee evicts: %v", err)
	}
	// A gapped transaction in the pool: an executable newcomer could evict it.
	q := New(Config{MaxTotal: 1})
	g, _ := crypto.GenerateKey()
	if _, err := q.Add(mk(t, g, 5, 20, 1), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	if q.Refuses(same, nil, bf) {
		t.Fatal("refused early although a gapped transaction could be evicted")
	}
}

// TestSetLimitBoundsAdmission: below MaxTotal the admission limit refuses
// the going fee and still lets a higher one evict.
func TestSetLimitBoundsAdmission(t *testing.T) {
	p := New(Config{})
	p.SetLimit(2)
	for range 2 {
		k, _ := crypto.GenerateKey()
		if _, err := p.Add(mk(t, k, 0, 20, 1), nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	k, _ := crypto.GenerateKey()
	if _, err := p.Add(mk(t, k, 0, 20, 1), nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("at the limit: %v", err)
	}
	if dropped, err := p.Add(mk(t, k, 0, 40, 20), nil, rich(), bf); err != nil || dropped == nil {
		t.Fatalf("a higher fee evicts at the limit: %v %v", dropped, err)
	}
}

// TestRelayedIgnoresAdmissionLimit: a relayed transaction is held up to
// MaxTotal even when the admission limit refuses a client's.
func TestRelayedIgnoresAdmissionLimit(t *testing.T) {
	p := New(Config{MaxTotal: 3})
	p.SetLimit(1)
	a, _ := crypto.GenerateKey()
	b, _ := crypto.GenerateKey()
	if _, err := p.Add(mk(t, a, 0, 20, 1), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Add(mk(t, b, 0, 20, 1), nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("client past the limit: %v", err)
	}
	if _, err := p.AddRelayed(mk(t, b, 0, 20, 1), nil, rich(), bf); err != nil {
		t.Fatalf("relayed within capacity: %v", err)
	}
}
