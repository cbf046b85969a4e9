package timers

import (
	"bytes"
	"slices"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/state"
)

// The queue must run on the chain's real change set.
var _ KV = (*state.Overlay)(nil)

// memKV is an ordered in-memory KV: a map for values and a sorted key
// slice for scans. It also serves as a state.Reader.
type memKV struct {
	m    map[string][]byte
	keys []string
}

func newMemKV() *memKV { return &memKV{m: make(map[string][]byte)} }

func (s *memKV) Get(k []byte) ([]byte, bool, error) {
	v, ok := s.m[string(k)]
	return v, ok, nil
}

func (s *memKV) Set(k, v []byte) {
	ks := string(k)
	if _, ok := s.m[ks]; !ok {
		i, _ := slices.BinarySearch(s.keys, ks)
		s.keys = slices.Insert(s.keys, i, ks)
	}
	s.m[ks] = append([]byte{}, v...)
}

func (s *memKV) Delete(k []byte) {
	ks := string(k)
	if _, ok := s.m[ks]; !ok {
		return
	}
	delete(s.m, ks)
	i, _ := slices.BinarySearch(s.keys, ks)
	s.keys = slices.Delete(s.keys, i, i+1)
}

func (s *memKV) Scan(prefix []byte, fn func(k, v []byte) error) error {
	p := string(prefix)
	i, _ := slices.BinarySearch(s.keys, p)
	for ; i < len(s.keys) && strings.HasPrefix(s.keys[i], p); i++ {
		if err := fn([]byte(s.keys[i]), s.m[s.keys[i]]); err != nil {
			return err
		}
	}
	return nil
}

// dump is the whole store as one byte string (length-prefixed pairs in key
// order), for byte-identity checks.
func (s *memKV) dump() []byte {
	var b bytes.Buffer
	for _, k := range s.keys {
		v := s.m[k]
		b.Write(be8(uint64(len(k))))
		b.WriteString(k)
		b.Write(be8(uint64(len(v))))
		b.Write(v)
	}
	return b.Bytes()
}

// snapshot is an immutable sorted store built in one go; Get and Scan are
// O(log n). Benchmarks put a state.Overlay over it, as block execution puts
// one over the committed state.
type snapshot struct {
	keys []string
	vals [][]byte
}

func snapshotOf(m map[string][]byte) *snapshot {
	s := &snapshot{keys: make([]string, 0, len(m))}
	for k := range m {
		s.keys = append(s.keys, k)
	}
	slices.Sort(s.keys)
	s.vals = make([][]byte, len(s.keys))
	for i, k := range s.keys {
		s.vals[i] = m[k]
	}
	return s
}

func (s *snapshot) Get(k []byte) ([]byte, bool, error) {
	i, ok := slices.BinarySearch(s.keys, string(k))
	if !ok {
		return nil, false, nil
	}
	return s.vals[i], true, nil
}

func (s *snapshot) Scan(prefix []byte, fn func(k, v []byte) error) error {
	p := string(prefix)
	i, _ := slices.BinarySearch(s.keys, p)
	for ; i < len(s.keys) && strings.HasPrefix(s.keys[i], p); i++ {
		if err := fn([]byte(s.keys[i]), s.vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// mapKV is a write buffer used to build a snapshot (no ordered scans).
type mapKV map[string][]byte

func (m mapKV) Get(k []byte) ([]byte, bool, error) { v, ok := m[string(k)]; return v, ok, nil }
func (m mapKV) Set(k, v []byte)                    { m[string(k)] = append([]byte{}, v...) }
func (m mapKV) Delete(k []byte)                    { delete(m, string(k)) }
func (m mapKV) Scan(prefix []byte, fn func(k, v []byte) error) error {
	var ks []string
	for k := range m {
		if strings.HasPrefix(k, string(prefix)) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	for _, k := range ks {
		if err := fn([]byte(k), m[k]); err != nil {
			return err
		}
	}
	return nil
}
