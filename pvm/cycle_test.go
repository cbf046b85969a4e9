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
	for _, handler := range []string{"cyc", "pair", "cyc"} {
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
	out := call(t, e, h, cycleActor, "acyclic", nil, false)
	if out.Err != nil {
		t.Fatalf("acyclic: %v", out.Err)
	}
	if got := decodeRet(t, out); got != uint64(10) {
		t.Fatalf("acyclic = %v", got)
	}
}
