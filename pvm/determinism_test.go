package pvm

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
)

const detActor = `
import json, math, hashlib, decimal, re, struct
from collections import OrderedDict
from cowboy_sdk import actor, public, runtime

class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

@actor
class Det:
    def __init__(self, seed):
        self.storage["seed"] = seed
        self.storage["log"] = []

    @public
    def mix(self, n):
        seed = self.storage["seed"]
        s = {(seed * i * 7919) % 1009 for i in range(n)}
        objs = {Point(i, i) for i in range(5)}
        d = {}
        for v in s:
            d[str(v)] = v * 1.5
        words = sorted(d, key=lambda k: (d[k], k))[:5]
        h = hashlib.sha256(json.dumps(d).encode()).hexdigest()
        f = sum(math.sin(x / 10.0) * math.exp(-x / 50.0) for x in range(n))
        dec = str(decimal.Decimal(1) / decimal.Decimal(7))
        big = pow(seed, 300, 2**255 - 19)
        log = self.storage["log"]
        log.append(h[:8])
        self.storage["log"] = log
        runtime.emit_event("mixed", {"h": h, "n": len(s)})
        return [list(s)[:10], words, h, f.hex(), dec, big, repr(Point(1, 2)), [p.x for p in objs],
                re.findall(r"[0-9]+", "a1b22c333"), struct.pack(">I", seed)]

    @public
    def fail(self):
        x = {}
        return x["missing"]

    @public
    def spin(self):
        while True:
            pass
`

const mathBitsActor = `
import math
class Actor:
    def bits(self):
        vals = [math.sin(1.0), math.cos(1.0), math.tan(0.5), math.exp(1.0), math.log(10.0), math.log10(2.0),
                math.log2(3.0), math.atan(1.0), math.atan2(1.0, -2.0), math.asin(0.3), math.acos(0.3),
                math.sinh(1.5), math.cosh(1.5), math.tanh(0.5), math.pow(2.0, 0.5), 1.0001 ** 10000.5,
                math.sqrt(2.0), math.sin(1e22), math.exp(-700.5), math.expm1(1e-10), math.log1p(1e-10),
                math.hypot(3.0, 4.0)]
        return [v.hex() for v in vals]
`

var wantMathBits = []any{
	"0x1.aed548f090ceep-1", "0x1.14a280fb5068cp-1", "0x1.17b4f5bf3474ap-1", "0x1.5bf0a8b145769p+1",
	"0x1.26bb1bbb55516p+1", "0x1.34413509f79ffp-2", "0x1.95c01a39fbd68p+0", "0x1.921fb54442d18p-1",
	"0x1.56c6e7397f5aep+1", "0x1.380159e14f6ffp-2", "0x1.441f5ecbeef59p+0", "0x1.108c3aabd6a60p+1",
	"0x1.2d1bc21e22022p+1", "0x1.d9353d7568af3p-2", "0x1.6a09e667f3bcdp+0", "0x1.5bf0a8b622801p+1",
	"0x1.6a09e667f3bcdp+0", "-0x1.b453ab76bf397p-1", "0x1.4ff475c68ca02p-1011", "0x1.b7cdfd9dda4e3p-34",
	"0x1.b7cdfd9d1d693p-34", "0x1.4000000000000p+2",
}

func TestMathKnownBits(t *testing.T) {
	got := decodeRet(t, call(t, engine(t), newMemHost(), mathBitsActor, "bits", nil, false))
	if !reflect.DeepEqual(got, wantMathBits) {
		t.Fatalf("math bits differ:\n got %v\nwant %v", got, wantMathBits)
	}
}

// The same sequence of calls on two separate engines yields byte-identical
// outcomes and host state.
func TestDeterminismAcrossEngines(t *testing.T) {
	ctx := context.Background()
	run := func(e *Engine) (string, string) {
		h := newMemHost()
		var log bytes.Buffer
		steps := []struct {
			handler string
			payload any
			init    bool
			cycles  uint64
		}{
			{"", []any{12345}, true, 1_000_000},
			{"mix", []any{50}, false, 5_000_000},
			{"mix", []any{120}, false, 5_000_000},
			{"fail", nil, false, 1_000_000},
			{"spin", nil, false, 200_000},
			{"mix", []any{7}, false, 5_000_000},
		}
		for _, s := range steps {
			inv := &Invocation{Actor: addr(9), Caller: addr(8), Origin: addr(7), Handler: s.handler,
				Code: []byte(detActor), CyclesLimit: s.cycles, CellsLimit: 100_000, Init: s.init}
			if s.payload != nil {
				inv.Payload = cborOf(t, s.payload)
			}
			out, err := e.Execute(ctx, inv, h)
			if err != nil {
				t.Fatalf("Execute %s: %v", s.handler, err)
			}
			fmt.Fprintf(&log, "%s cycles=%d cells=%d ret=%x err=%v\n", s.handler, out.CyclesUsed, out.CellsUsed, out.Return, out.Err)
		}
		return log.String(), h.snapshot()
	}
	e1 := engine(t)
	e2, err := New(ctx, Config{PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	l1, s1 := run(e1)
	l2, s2 := run(e2)
	if l1 != l2 {
		t.Fatalf("outcomes differ:\n%s\n---\n%s", l1, l2)
	}
	if s1 != s2 {
		t.Fatalf("host state differs:\n%s\n---\n%s", s1, s2)
	}
	t.Logf("outcomes:\n%s", l1)
	if !bytes.Contains([]byte(l1), []byte("fail cycles=")) || !bytes.Contains([]byte(l1), []byte("OutOfCycles")) {
		t.Fatalf("expected failures in the log:\n%s", l1)
	}
}
