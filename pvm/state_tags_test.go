package pvm

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

const stateKinds = `
class Actor:
    def __init__(self):
        self.v = None

    def put(self, which):
        vals = {
            "tuple": (1, "a", (2, 3)),
            "empty tuple": (),
            "set": {3, 1, 2},
            "empty set": set(),
            "frozenset": frozenset([5, 4]),
            "tuple in set": {(1, 2), (0, 1)},
            "tuple keys": {(1, 2): "x", (0,): "y"},
            "frozenset key": {frozenset([1]): (1,)},
            "nested": [({1, 2}, (3,)), {"k": (frozenset(), [4])}],
            "list stays list": [1, [2]],
        }
        self.v = vals[which]

    def kinds(self):
        def desc(x):
            t = type(x)
            if t is tuple:
                return ["tuple"] + [desc(e) for e in x]
            if t is list:
                return ["list"] + [desc(e) for e in x]
            if t is set:
                return ["set"] + [desc(e) for e in x]
            if t is frozenset:
                return ["frozenset"] + [desc(e) for e in x]
            if t is dict:
                return ["dict"] + [[desc(k), desc(v)] for k, v in x.items()]
            return repr(x)
        return desc(self.v)

    def same(self):
        return self.v
`

// Plain-style state keeps tuples, sets and frozensets (insertion order
// included) across calls; the encoding is deterministic.
func TestPlainStateTuplesAndSets(t *testing.T) {
	e := engine(t)
	cases := []struct{ which, want string }{
		{"tuple", "[tuple 1 'a' [tuple 2 3]]"},
		{"empty tuple", "[tuple]"},
		{"set", "[set 3 1 2]"},
		{"empty set", "[set]"},
		{"frozenset", "[frozenset 5 4]"},
		{"tuple in set", "[set [tuple 1 2] [tuple 0 1]]"},
		{"tuple keys", "[dict [[tuple 0] 'y'] [[tuple 1 2] 'x']]"}, // map keys in canonical order
		{"frozenset key", "[dict [[frozenset 1] [tuple 1]]]"},
		{"nested", "[list [tuple [set 1 2] [tuple 3]] [dict ['k' [tuple [frozenset] [list 4]]]]]"},
		{"list stays list", "[list 1 [list 2]]"},
	}
	for _, c := range cases {
		t.Run(c.which, func(t *testing.T) {
			h := newMemHost()
			if out := call(t, e, h, stateKinds, "", nil, true); out.Err != nil {
				t.Fatalf("init: %v", out.Err)
			}
			if out := call(t, e, h, stateKinds, "put", []any{c.which}, false); out.Err != nil {
				t.Fatalf("put: %v", out.Err)
			}
			first := append([]byte(nil), h.store["__STATE__"]...)
			if got := fmt.Sprint(decodeRet(t, call(t, e, h, stateKinds, "kinds", nil, false))); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			// reading does not rewrite: the state re-encodes to the same bytes
			if !bytes.Equal(h.store["__STATE__"], first) {
				t.Fatalf("state changed by a read:\n %x\n %x", first, h.store["__STATE__"])
			}
			inv := &Invocation{Actor: addr(1), Handler: "same", Code: []byte(stateKinds), CyclesLimit: 1_000_000,
				CellsLimit: 100_000, ReadOnly: true}
			out, err := e.Execute(context.Background(), inv, h)
			if err != nil || out.Err != nil {
				t.Fatalf("read-only call: %v %v", err, out.Err)
			}
		})
	}
}

// States written before tagging (tuples and sets stored as arrays, tuple
// map keys as arrays) still load, and a read-only call on them succeeds.
func TestPlainStateUntaggedStillLoads(t *testing.T) {
	e := engine(t)
	h := newMemHost()
	// {"v": [[1, 2], {[1, 2]: "x"}]}: an array and a map with an array key
	old := []byte{0xa1, 0x61, 'v', 0x82, 0x82, 0x01, 0x02, 0xa1, 0x82, 0x01, 0x02, 0x61, 'x'}
	h.store["__STATE__"] = old
	if got := fmt.Sprint(decodeRet(t, call(t, e, h, stateKinds, "kinds", nil, false))); got != "[list [list 1 2] [dict [[tuple 1 2] 'x']]]" {
		t.Fatalf("got %s", got)
	}
	if !bytes.Equal(h.store["__STATE__"], old) {
		t.Fatalf("unchanged old state was rewritten: %x", h.store["__STATE__"])
	}
	inv := &Invocation{Actor: addr(1), Handler: "same", Code: []byte(stateKinds), CyclesLimit: 1_000_000,
		CellsLimit: 100_000, ReadOnly: true}
	out, err := e.Execute(context.Background(), inv, h)
	if err != nil || out.Err != nil {
		t.Fatalf("read-only call on old state: %v %v", err, out.Err)
	}
}

// The tagged encoding is fixed: tuple = tag 0x43420001, set = tag 258,
// frozenset = tag 0x43420002, each around the array of elements in order.
func TestPlainStateEncoding(t *testing.T) {
	e := engine(t)
	h := newMemHost()
	call(t, e, h, stateKinds, "", nil, true)
	call(t, e, h, stateKinds, "put", []any{"nested"}, false)
	want := "a16176" + "82" + "da43420001" + "82" + "d9010282" + "0102" + "da43420001" + "8103" +
		"a1616b" + "da43420001" + "82" + "da43420002" + "80" + "8104"
	if got := fmt.Sprintf("%x", h.store["__STATE__"]); got != want {
		t.Fatalf("__STATE__ = %s, want %s", got, want)
	}
}
