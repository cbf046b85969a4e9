package mempool

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Transactions already in a proposed or final block (marked ordered) do
// not count against the admission limit: with the pool at its limit, all
// of it on its way into blocks, an executable newcomer at the going fee is
// admitted, and only once the waiting transactions reach the limit again
// is the next one refused. Before the mark existed, the blocks in flight
// filled the limit and the overloaded network's next block found little
// to carry (issue 14, docs/BENCHMARKS.md).
func TestOrderedDoNotFillAdmission(t *testing.T) {
	p := New(Config{MaxTotal: 100})
	p.SetLimit(4)
	var inFlight []types.Hash
	for range 4 {
		k, _ := crypto.GenerateKey()
		tx := mk(t, k, 0, 20, 1)
		if _, err := p.Add(tx, nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
		inFlight = append(inFlight, tx.Hash())
	}
	late, _ := crypto.GenerateKey()
	if _, err := p.Add(mk(t, late, 0, 20, 1), nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("a fifth transaction at the going fee with 4 waiting at limit 4: %v, want pool_full", err)
	}
	p.MarkOrdered(inFlight...)
	if p.Full() {
		t.Fatal("pool full with every transaction ordered")
	}
	var admitted []types.Hash
	for i := range 4 {
		k, _ := crypto.GenerateKey()
		tx := mk(t, k, 0, 20, 1)
		if _, err := p.Add(tx, nil, rich(), bf); err != nil {
			t.Fatalf("newcomer %d with 4 ordered and %d waiting at limit 4: %v", i, i, err)
		}
		admitted = append(admitted, tx.Hash())
	}
	if _, err := p.Add(mk(t, late, 0, 20, 1), nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("with 4 waiting at limit 4: %v, want pool_full", err)
	}
	// Evicting an ordered transaction frees nothing the limit counts: a
	// richer newcomer evicts a waiting one, never an ordered one.
	rich2, _ := crypto.GenerateKey()
	dropped, err := p.Add(mk(t, rich2, 0, 200, 100), nil, rich(), bf)
	if err != nil || dropped == nil {
		t.Fatalf("a newcomer paying 10× did not evict: dropped %v, %v", dropped, err)
	}
	for _, h := range inFlight {
		if *dropped == h {
			t.Fatalf("evicted ordered transaction %s", h)
		}
	}
	if exe, ord, gap := p.Counts(); exe != 4 || ord != 4 || gap != 0 {
		t.Fatalf("counts executable %d ordered %d gapped %d, want 4 4 0", exe, ord, gap)
	}
	// Executed: the ordered ones leave, and their marks with them.
	p.Remove(inFlight...)
	if exe, ord, _ := p.Counts(); exe != 4 || ord != 0 {
		t.Fatalf("after execution: executable %d ordered %d, want 4 0", exe, ord)
	}
	if !p.Full() {
		t.Fatal("4 waiting at limit 4 and the pool is not full")
	}
}
