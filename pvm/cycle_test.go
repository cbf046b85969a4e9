package pvm

import "testing"

const cycleActor = `
class Actor:
    def __init__(self):
        self.n = 0

    def cyc(self):
        a = []
        a.append(a)
        return 1

    def pair(self):
        x = {}
        y = {"x": x}
        x["y"] = y
        return 2

    def objs(self):
        class Node:
            pass
        n = Node()
        n.me = n
        return 3

    def idioms(self):
        def fact(k):
            return 1 if k < 2 else k * fact(k - 1)
        class Local:
            pass
        return fact(5) + len([Local()])

    def acyclic(self):
        a = [[i] for i in range(10)]
        self.n = self.n + len(a)
        return self.n
`

// A reference cycle that outlives the handler raises DeterminismError (spec
// 002 §3): the cyclic collector is disabled, so the cycle would leak.
func TestReferenceCycleRaisesDeterminismError(t *testing.T) {
	e := engine(t)
	h := newMemHost()
	if out := call(t, e, h, cycleActor, "", nil, true); out.Err != nil {
		t.Fatalf("init: %v", out.Err)
	}
	var cycles []uint64
	for _, handler := range []string{"cyc", "pair", "objs", "cyc"} {
		out := call(t, e, h, cycleActor, handler, nil, false)
		if out.Err == nil || out.Err.Kind != DeterminismError {
			t.Fatalf("%s: want DeterminismError, got %+v", handler, out.Err)
		}
		if handler == "cyc" {
			cycles = append(cycles, out.CyclesUsed)
		}
	}
	if cycles[0] != cycles[1] {
		t.Fatalf("cycle failure metered differently: %d vs %d", cycles[0], cycles[1])
	}
	// cycles made by code structure (recursive closure, local class) are
	// tolerated on purpose; see _check_cycles in _pvm_worker.py
	out := call(t, e, h, cycleActor, "idioms", nil, false)
	if got := decodeRet(t, out); got != uint64(121) {
		t.Fatalf("idioms = %v (%+v)", got, out.Err)
	}
	out = call(t, e, h, cycleActor, "acyclic", nil, false)
	if out.Err != nil {
		t.Fatalf("acyclic: %v", out.Err)
	}
	if got := decodeRet(t, out); got != uint64(10) {
		t.Fatalf("acyclic = %v", got)
	}
}
