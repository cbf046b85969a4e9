package store

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BenchmarkOverlayScanEarlyStop: a bounded read (the first 16 keys) of a
// 100,000-key range, as the timer due set and the callback queue do,
// directly on the bbolt view (baseline) and through an overlay holding a
// few dirty keys of the range. The overlay streams the base scan, so the
// two should cost about the same; "full range" is what reading the whole
// range costs, as the overlay did before it streamed.
func BenchmarkOverlayScanEarlyStop(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "chain.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 100_000
	key := func(i int) []byte {
		return state.ChainKey("bench/" + string(binary.BigEndian.AppendUint32(nil, uint32(i))))
	}
	writes := make([]state.Write, n)
	for i := range writes {
		writes[i] = state.Write{Key: key(i), Value: []byte{1}}
	}
	if _, err := s.Commit(writes, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(nil, root, nil), nil, nil
	}); err != nil {
		b.Fatal(err)
	}
	prefix := state.ChainKey("bench/")
	stop := errors.New("stop")
	first16 := func(r state.Reader) error {
		seen := 0
		err := r.Scan(prefix, func(k, v []byte) error {
			if seen++; seen == 16 {
				return stop
			}
			return nil
		})
		if errors.Is(err, stop) {
			return nil
		}
		return err
	}
	run := func(b *testing.B, scan func(v *View) error) {
		if err := s.View(func(v *View) error {
			for i := 0; i < b.N; i++ {
				if err := scan(v); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("baseline_view_first16", func(b *testing.B) { run(b, func(v *View) error { return first16(v) }) })
	b.Run("overlay_first16", func(b *testing.B) {
		run(b, func(v *View) error {
			o := state.NewOverlay(v)
			o.Set(key(3), []byte{2})
			o.Delete(key(5))
			o.Set(key(n+1), []byte{3})
			return first16(o)
		})
	})
	b.Run("full_range", func(b *testing.B) {
		run(b, func(v *View) error { return v.Scan(prefix, func(k, v []byte) error { return nil }) })
	})
}
