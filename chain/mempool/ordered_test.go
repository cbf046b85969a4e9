package mempool

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Counts splits the pool into ordered (MarkOrdered), executable and
// gapped transactions, summing to Len; a mark leaves with its
// transaction, whether execution passes it (Prune), it is removed or a
// replacement takes its nonce; unknown hashes are ignored.
func TestCountsOrderedExecutableGapped(t *testing.T) {
	p := New(Config{})
	a, _ := crypto.GenerateKey()
	b, _ := crypto.GenerateKey()
	txs := []*types.Tx{mk(t, a, 0, 20, 1), mk(t, a, 1, 20, 1), mk(t, a, 3, 20, 1), mk(t, b, 0, 20, 1)}
	for _, tx := range txs {
		if _, err := p.Add(tx, nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, exe, ord, gap int) {
		t.Helper()
		e, o, g := p.Counts()
		if e != exe || o != ord || g != gap || e+o+g != p.Len() {
			t.Fatalf("%s: executable %d ordered %d gapped %d (len %d), want %d %d %d", what, e, o, g, p.Len(), exe, ord, gap)
		}
	}
	check("admitted", 3, 0, 1)
	p.MarkOrdered(txs[0].Hash(), txs[1].Hash(), txs[3].Hash(), types.Hash{0x01})
	p.MarkOrdered(txs[0].Hash()) // twice is once
	check("three in a block", 0, 3, 1)
	// b's nonce 0 replaced by a richer one: the new transaction is not in
	// the block that was voted for.
	if _, err := p.Add(mk(t, b, 0, 40, 2), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	check("replaced", 1, 2, 1)
	// a's block executes: nonces 0 and 1 leave with their marks.
	if err := p.Prune(func(addr types.Address) (uint64, error) {
		if addr == types.PubkeyToAddress(a.PublicKey) {
			return 2, nil
		}
		return 0, nil
	}); err != nil {
		t.Fatal(err)
	}
	check("executed", 1, 0, 1)
}
