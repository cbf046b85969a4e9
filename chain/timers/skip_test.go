package timers

import (
	"math/rand/v2"
	"strings"
)

// skipKV is an ordered store with O(log n) Get, Set, Delete and seek, a
// stand-in for the node's bbolt B+tree in benchmarks with 10^6 timers.
type skipKV struct {
	head  *skipNode
	level int
	rng   *rand.Rand
	n     int
	steps uint64 // nodes visited by seeks: the O(log n) work, counted
}

const skipMaxLevel = 24

type skipNode struct {
	key  string
	val  []byte
	next []*skipNode
}

func newSkipKV(seed uint64) *skipKV {
	return &skipKV{head: &skipNode{next: make([]*skipNode, skipMaxLevel)}, level: 1, rng: rand.New(rand.NewPCG(seed, 0))}
}

// seek fills update with the last node before key on every level and
// returns the first node ≥ key.
func (s *skipKV) seek(key string, update []*skipNode) *skipNode {
	x := s.head
	for i := s.level - 1; i >= 0; i-- {
		for x.next[i] != nil && x.next[i].key < key {
			x = x.next[i]
			s.steps++
		}
		s.steps++
		if update != nil {
			update[i] = x
		}
	}
	return x.next[0]
}

func (s *skipKV) Get(k []byte) ([]byte, bool, error) {
	x := s.seek(string(k), nil)
	if x != nil && x.key == string(k) {
		return x.val, true, nil
	}
	return nil, false, nil
}

func (s *skipKV) Set(k, v []byte) {
	var update [skipMaxLevel]*skipNode
	x := s.seek(string(k), update[:])
	if x != nil && x.key == string(k) {
		x.val = append([]byte(nil), v...)
		return
	}
	lvl := 1
	for lvl < skipMaxLevel && s.rng.Uint32()&3 == 0 {
		lvl++
	}
	for i := s.level; i < lvl; i++ {
		update[i] = s.head
	}
	s.level = max(s.level, lvl)
	n := &skipNode{key: string(k), val: append([]byte(nil), v...), next: make([]*skipNode, lvl)}
	for i := range lvl {
		n.next[i] = update[i].next[i]
		update[i].next[i] = n
	}
	s.n++
}

func (s *skipKV) Delete(k []byte) {
	var update [skipMaxLevel]*skipNode
	x := s.seek(string(k), update[:])
	if x == nil || x.key != string(k) {
		return
	}
	for i := range len(x.next) {
		update[i].next[i] = x.next[i]
	}
	s.n--
}

func (s *skipKV) Scan(prefix []byte, fn func(k, v []byte) error) error {
	p := string(prefix)
	for x := s.seek(p, nil); x != nil && strings.HasPrefix(x.key, p); x = x.next[0] {
		if err := fn([]byte(x.key), x.val); err != nil {
			return err
		}
	}
	return nil
}
