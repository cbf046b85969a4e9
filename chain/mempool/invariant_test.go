package mempool

import (
	"crypto/ecdsa"
	"math/rand/v2"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// checkInvariants recomputes every account's executable run and the
// gapped counts from scratch and compares them with the pool's books.
func checkInvariants(t *testing.T, p *Pool) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	total, gapped := 0, 0
	for from, a := range p.accounts {
		if len(a.txs) == 0 {
			t.Fatalf("empty account %s kept", from)
		}
		end := a.base
		for a.txs[end] != nil {
			end++
		}
		if end != a.end {
			t.Fatalf("account %s: end %d, want %d", from, a.end, end)
		}
		g := 0
		for n, e := range a.txs {
			if n < a.base {
				t.Fatalf("account %s: nonce %d below base %d", from, n, a.base)
			}
			if p.byHash[e.tx.Hash()] != e {
				t.Fatalf("account %s: nonce %d not indexed", from, n)
			}
			if n > end {
				g++
				if e.gapped.IsZero() {
					t.Fatalf("gapped nonce %d not stamped", n)
				}
			} else if !e.gapped.IsZero() {
				t.Fatalf("executable nonce %d stamped gapped", n)
			}
		}
		if g != a.ngapped {
			t.Fatalf("account %s: %d gapped, books say %d", from, g, a.ngapped)
		}
		total += len(a.txs)
		gapped += g
	}
	if total != len(p.byHash) || gapped != p.ngapped {
		t.Fatalf("pool books: %d/%d total, %d/%d gapped", len(p.byHash), total, p.ngapped, gapped)
	}
}

// checkVictims compares the pool's eviction candidates, when it holds them
// as current (kept up by foldVictims between scans), with a fresh scan.
func checkVictims(t *testing.T, p *Pool) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.victims
	if v == nil || v.gen != p.gen {
		return
	}
	fresh := &victims{bf: v.bf}
	for _, a := range p.accounts {
		fresh.fold(a)
	}
	if v.gapped != fresh.gapped || v.stuck != fresh.stuck || v.cheap != fresh.cheap ||
		(v.cheap != nil && v.cheapFee.Cmp(fresh.cheapFee) != 0) {
		t.Fatalf("kept candidates %+v, a fresh scan gives %+v", *v, *fresh)
	}
}

// TestPoolBooksUnderRandomOperations drives the pool with random
// admissions (contiguous, gapped, replacements), removals, state nonces
// moving forward and expiry, and checks its bookkeeping after each step.
func TestPoolBooksUnderRandomOperations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 14))
	p := New(Config{MaxTotal: 120, MaxPerAccount: 20, MaxGappedPerAccount: 6, MaxGapped: 30})
	keys := make([]*ecdsa.PrivateKey, 8)
	state := map[types.Address]uint64{}
	for i := range keys {
		keys[i], _ = crypto.GenerateKey()
	}
	var added []*types.Tx
	for step := range 3000 {
		k := keys[rng.IntN(len(keys))]
		from := types.PubkeyToAddress(k.PublicKey)
		switch op := rng.IntN(10); {
		case op < 6:
			n := state[from] + uint64(rng.IntN(12))
			tx := mk(t, k, n, 20+uint64(rng.IntN(3))*10, 1)
			if _, err := p.Add(tx, nil, AccountState{Nonce: state[from], Balance: rich().Balance}, bf); err == nil {
				added = append(added, tx)
			}
		case op < 8 && len(added) > 0:
			p.Remove(added[rng.IntN(len(added))].Hash())
		default:
			state[from] += uint64(rng.IntN(3))
			if err := p.Prune(func(a types.Address) (uint64, error) { return state[a], nil }); err != nil {
				t.Fatal(err)
			}
		}
		// A refusal or eviction scans for candidates; admissions between
		// scans keep them current (checkVictims).
		if rng.IntN(3) == 0 {
			p.mu.Lock()
			p.victimsLocked(bf)
			p.mu.Unlock()
		}
		checkInvariants(t, p)
		checkVictims(t, p)
		if t.Failed() {
			t.Fatalf("step %d", step)
		}
	}
}
