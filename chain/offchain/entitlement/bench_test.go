package entitlement

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// fullRunner holds MaxEntitlementsPerAddress entitlements, the pool one last.
func fullRunner(b *testing.B) (*Registry, *MemKV, types.Address) {
	kv := NewMemKV()
	r := NewRegistry(kv, types.Address{9})
	runner := types.Address{7}
	for i := 0; i < MaxEntitlementsPerAddress-1; i++ {
		s := NamespaceScope([]byte{byte(i >> 8), byte(i)})
		if _, err := r.Grant(types.Address{1}, runner, s, Action{Kind: ActionAll}, Constraints{Revocable: true}, 1); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.Grant(types.Address{1}, runner, RunnerPoolScope([]byte("gpu")), RunnerJoinPoolAction([]byte("gpu")), Constraints{Revocable: true}, 1); err != nil {
		b.Fatal(err)
	}
	return r, kv, runner
}

// BenchmarkInPoolFull is the §4 pool filter for a runner holding the
// maximum 256 entitlements (what the dispatcher's 500-cycle charge covers).
func BenchmarkInPoolFull(b *testing.B) {
	r, _, runner := fullRunner(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := r.InPool(runner, []byte("gpu"), 2); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkKVGetBaseline is one Get of a stored record: the baseline.
func BenchmarkKVGetBaseline(b *testing.B) {
	_, kv, runner := fullRunner(b)
	var key []byte
	kv.Scan(key0(runner), func(k, _ []byte) error { key = append([]byte(nil), k...); return nil })
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := kv.Get(key); !ok {
			b.Fatal("missing")
		}
	}
}

func key0(a types.Address) []byte { return key(prefixEnt, a[:]) }
