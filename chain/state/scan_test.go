package state

import (
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestOverlayScanMatchesReference: over random bases, two stacked overlays
// of sets and deletes, random prefixes and random early stops, Scan yields
// exactly what a sorted read of the merged map would, in key order.
func TestOverlayScanMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	key := func() string {
		b := []byte{0x0a}
		for n := 1 + rng.Intn(3); n > 0; n-- {
			b = append(b, "abc"[rng.Intn(3)])
		}
		return string(b)
	}
	errStop := errors.New("stop")
	for iter := 0; iter < 2000; iter++ {
		base := MapReader{}
		want := map[string][]byte{}
		for n := rng.Intn(12); n > 0; n-- {
			k := key()
			base[k] = []byte{byte(rng.Intn(256))}
			want[k] = base[k]
		}
		inner := NewOverlay(base)
		outer := NewOverlay(inner)
		for _, o := range []*Overlay{inner, outer} {
			for n := rng.Intn(10); n > 0; n-- {
				k := key()
				if rng.Intn(3) == 0 {
					o.Delete([]byte(k))
					delete(want, k)
				} else {
					v := []byte{byte(rng.Intn(256))}
					o.Set([]byte(k), v)
					want[k] = v
				}
			}
		}
		prefix := key()[:1+rng.Intn(2)]
		var ref []string
		for k, v := range want {
			if strings.HasPrefix(k, prefix) {
				ref = append(ref, k+"="+string(v))
			}
		}
		slices.Sort(ref)
		limit := len(ref) + 1
		if rng.Intn(2) == 0 && len(ref) > 0 {
			limit = rng.Intn(len(ref)) + 1
			ref = ref[:limit]
		}
		var got []string
		err := outer.Scan([]byte(prefix), func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			if len(got) == limit {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		if !slices.Equal(got, ref) {
			t.Fatalf("iter %d prefix %q:\n got %q\nwant %q", iter, prefix, got, ref)
		}
	}
}
