package pvm

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
)

func actorSrc(body string) string {
	lines := strings.Split(strings.Trim(body, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "        " + l
	}
	return "class Actor:\n    def run(self):\n" + strings.Join(lines, "\n") + "\n"
}

func runHostile(t *testing.T, e *Engine, src string, cycles uint64) *Outcome {
	t.Helper()
	inv := &Invocation{Actor: addr(1), Caller: addr(2), Origin: addr(3), Handler: "run", Code: []byte(src),
		CyclesLimit: cycles, CellsLimit: 1 << 20}
	out, err := e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return out
}

func TestHostileCorpus(t *testing.T) {
	e := engine(t)
	cases := []struct {
		name   string
		body   string
		cycles uint64
		kind   ErrorKind
		msg    string
	}{
		{"infinite loop", "while True:\n    pass", 1_000_000, OutOfCycles, "out of cycles"},
		{"infinite loop continue", "i = 0\nwhile True:\n    i += 1\n    continue", 1_000_000, OutOfCycles, ""},
		{"sum huge range", "return sum(range(10**12))", 10_000_000, OutOfCycles, ""},
		{"list huge range", "return list(range(10**12))", 10_000_000, OutOfCycles, ""},
		{"sorted huge range", "return sorted(range(10**9))", 10_000_000, OutOfCycles, ""},
		{"max huge range", "return max(range(10**12))", 10_000_000, OutOfCycles, ""},
		{"all huge range", "return all(range(1, 10**12))", 10_000_000, OutOfCycles, ""},
		{"star unpack", "return [*range(10**10)]", 10_000_000, OutOfCycles, ""},
		{"power tower", "return 2**10**9", 10_000_000, OutOfCycles, ""},
		{"pow builtin", "return pow(3, 10**9)", 10_000_000, OutOfCycles, ""},
		{"shift bomb", "return 1 << 10**10", 10_000_000, OutOfCycles, ""},
		{"big mul chain", "x = 3**5000\nwhile True:\n    x = x * x", 10_000_000, ActorException, "OverflowError"},
		{"string repeat", `return "x" * 10**9`, 10_000_000, OutOfCycles, ""},
		{"string repeat memory", `return "x" * 10**8`, 10_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"list repeat", `return [0] * 10**9`, 10_000_000, OutOfCycles, ""},
		{"bytes alloc", `return bytes(10**9)`, 10_000_000, OutOfCycles, ""},
		{"ljust", `return "a".ljust(10**9)`, 10_000_000, OutOfCycles, ""},
		{"format width", `return format(1, ">999999999")`, 10_000_000, ActorException, "ValueError"},
		{"fstring width", `return f"{1:>999999999}"`, 10_000_000, ActorException, "ValueError"},
		{"percent width", `return "%999999999d" % 1`, 10_000_000, ActorException, "ValueError"},
		{"doubling string", "s = 'x'\nwhile True:\n    s = s + s", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"join bomb", "return ''.join(['x' * 1000000 for _ in range(100)])", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"deep recursion", "def f(n):\n    return f(n + 1)\nreturn f(0)", 10_000_000, RecursionLimit, ""},
		{"method recursion", "return self.run()", 10_000_000, RecursionLimit, ""},
		{"memory bomb list growth", "x = []\nwhile True:\n    x.append(1)", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"memory bomb comprehension", "return [[1] * 1000 for _ in range(100000)]", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"output bomb", "return 'y' * 2000000", 100_000_000, ReturnTooLarge, ""},
		{"regex catastrophic", "import re\nreturn re.match(r'(a+)+$', 'a' * 40 + 'b')", 10_000_000, ActorException, "nested repeats"},
		{"regex alternation", "import re\nreturn re.match(r'(a|aa)*$', 'a' * 40 + 'b')", 10_000_000, ActorException, "alternation"},
		{"regex polynomial", "import re\nreturn re.search(r'a.*a.*a.*a.*b', 'a' * 5000)", 10_000_000, OutOfCycles, ""},
		{"json bomb", "import json\nreturn json.loads('[' * 100000 + ']' * 100000)", 10_000_000, RecursionLimit, ""},
		{"hash input", "import hashlib\nreturn hashlib.sha256(b'x' * 10**7).hexdigest()", 10_000_000, OutOfCycles, ""},
		{"catch out of cycles", "while True:\n    try:\n        while True:\n            pass\n    except Exception:\n        pass", 1_000_000, OutOfCycles, ""},
		{"finally swallow", "try:\n    while True:\n        pass\nfinally:\n    return 1", 1_000_000, OutOfCycles, ""},
		{"itertools infinite", "import itertools\nreturn list(itertools.count())", 10_000_000, MemoryLimit, "(10485760 bytes)"},
		{"deque of range", "import collections\nreturn len(collections.deque(range(10**12)))", 10_000_000, OutOfCycles, ""},
		{"in huge list", "x = [0] * 100000\nn = 0\nwhile True:\n    n += 1 if -1 in x else 0", 10_000_000, OutOfCycles, ""},
		{"slice copy loop", "s = 'a' * 1000000\nwhile True:\n    t = s[1:]", 100_000_000, OutOfCycles, ""},
		{"round ndigits", "return round(5, -10**9)", 10_000_000, ActorException, "ndigits"},
		{"int str digits", "return int('9' * 100000)", 100_000_000, ActorException, "ValueError"},
		{"decimal context", "import decimal\nc = decimal.getcontext()\nc.prec = 10**9\nreturn str(decimal.Decimal(1) / 3)", 10_000_000, ActorException, "AttributeError"},
		{"open etc passwd", "return open('/tmp/../../etc/passwd').read()", 10_000_000, ValidationFailed, "open-outside-tmp"},
		{"tmp quota", "f = open('/tmp/a', 'w')\nwhile True:\n    f.write('x' * 4096)", 100_000_000, TmpLimit, ""},
		{"class escape", "return ().__class__.__bases__[0].__subclasses__()", 10_000_000, ValidationFailed, "dunder-attribute"},
		{"socket import", "import socket\nreturn socket.socket()", 10_000_000, ValidationFailed, "import-not-allowed"},
		{"typing sys", "import typing\nreturn typing.sys", 10_000_000, ActorException, "AttributeError"},
		{"re internals", "import re\nreturn re.sre_compile", 10_000_000, ActorException, "AttributeError"},
		{"format escape", "s = '{0.__class__}'\nreturn s.format(1)", 10_000_000, ActorException, "format fields"},
		{"getattr literal dunder runtime", "n = '__cla' + 'ss__'\nreturn getattr(1, 'real') if n else 0", 10_000_000, "", ""},
		{"hash of object", "return hash(object())", 10_000_000, ActorException, "not deterministic"},
		{"type three args", "return type('X', (), {})", 10_000_000, ActorException, "TypeError"},
		{"import os at runtime", "m = 'os'\nimport json\nreturn json.dumps(m)", 10_000_000, "", ""},
		{"write inherited fd", "f = open('/tmp/x', 'w')\nreturn f.fileno()", 10_000_000, ActorException, "AttributeError"},
		{"format via bound method", "s = '{0.__class__}'\nf = s.format\nreturn f(1)", 10_000_000, ActorException, "format fields"},
		{"format via getattr", "s = '{0.__class__}'\nreturn getattr(s, 'format')(1)", 10_000_000, ActorException, "format fields"},
		{"join via bound method", "j = ''.join\nreturn len(j(['x'] * 10**8))", 10_000_000, OutOfCycles, ""},
		{"fstring doubling", "s = 'x'\nwhile True:\n    s = f'{s}{s}'", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"dict growth", "d = {}\ni = 0\nwhile True:\n    d[i] = i\n    i += 1", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"fstring object repr", "return f'{object()}|{len}|{[object()]}'", 10_000_000, "", ""},
		{"swallow abort via __exit__", "class S:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return True\nwith S():\n    while True:\n        pass\nreturn 1", 1_000_000, OutOfCycles, ""},
		{"regex via match.re", "import re\nm = re.match(r'a', 'a')\nreturn m.re.match('(a+)+$', 'a' * 40 + 'b')", 10_000_000, ActorException, "AttributeError"},
		{"int of huge decimal", "import decimal\nreturn int(decimal.Decimal('1e999999'))", 10_000_000, ActorException, "OverflowError"},
		{"floor of huge decimal", "import decimal, math\nreturn math.floor(decimal.Decimal('1e999999'))", 10_000_000, ActorException, "OverflowError"},
		{"regex still works", "import re\nm = re.match(r'(\\w+)@(\\w+)', 'bob@site')\nreturn [m.group(1), m.group(2), m.span()]", 10_000_000, "", ""},
		{"compare huge strings", "a = 'x' * 5000000\nb = 'x' * 5000000\nn = 0\nwhile True:\n    if a == b:\n        n += 1", 100_000_000, OutOfCycles, ""},
		{"slice assign range", "x = []\nx[0:0] = range(10**9)\nreturn len(x)", 10_000_000, OutOfCycles, ""},
		{"split memory", "s = 'x ' * 5000000\nparts = s.split()\nparts2 = s.split()\nreturn len(parts)", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"isdigit loop", "s = '1' * 5000000\nwhile True:\n    s.isdigit()", 100_000_000, OutOfCycles, ""},
		{"list pop ok", "x = [1, 2, 3]\nd = {'a': 1}\nreturn [x.pop(), x.pop(0), d.pop('a')]", 10_000_000, "", ""},
		{"decimal fixed-point bomb", "import decimal\nd = decimal.Decimal('1e999999999')\nreturn f'{d:f}'", 10_000_000, ActorException, "decimal exponent"},
		{"decimal format bomb", "import decimal\nd = decimal.Decimal('1e999999999')\nreturn '{:f}'.format(d)", 10_000_000, ActorException, "decimal exponent"},
		{"shadowed range", "def range(n):\n    return ['%999999999d']\ndef f():\n    for i in range(1):\n        return i % 1\nreturn f()", 10_000_000, ActorException, "ValueError"},
		{"match-bound str", "def f(v):\n    i = 0\n    match v:\n        case i:\n            pass\n    return i % 1\nreturn f('%999999999d')", 10_000_000, ActorException, "ValueError"},
		{"comprehension rebinds counter", "def f(vs):\n    i = 0\n    i += 1\n    return [i % 1 for i in vs]\nreturn f(['%999999999d'])", 10_000_000, ActorException, "ValueError"},
		{"dict union loop", "d = {i: i for i in range(100000)}\nwhile True:\n    e = d | {}", 100_000_000, OutOfCycles, ""},
		{"dict ior growth", "d = {}\ni = 0\nwhile True:\n    d |= {i: i, i + 1: i}\n    i += 2", 1_000_000_000, MemoryLimit, "(10485760 bytes)"},
		{"set ops ok", "a = {1, 2, 3}\nb = {3, 4}\na |= b\nreturn [sorted(a | b), sorted(a - b), 5 | 2, {1: 2} | {3: 4}]", 10_000_000, "", ""},
		{"reserved storage key", "from cowboy_sdk import storage\nstorage['__OWNER__'] = 1", 10_000_000, ActorException, "PermissionError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := actorSrc(c.body)
			if strings.Contains(c.body, "from cowboy_sdk import storage") {
				src = "from cowboy_sdk import storage\n" + actorSrc(strings.Replace(c.body, "from cowboy_sdk import storage\n", "", 1))
			}
			out := runHostile(t, e, src, c.cycles)
			if c.kind == "" {
				if out.Err != nil {
					t.Fatalf("unexpected failure: %v", out.Err)
				}
				return
			}
			if out.Err == nil {
				t.Fatalf("want %s, call succeeded (cycles %d)", c.kind, out.CyclesUsed)
			}
			if out.Err.Kind != c.kind || !strings.Contains(out.Err.Message, c.msg) {
				t.Fatalf("got %s: %q; want %s containing %q", out.Err.Kind, out.Err.Message, c.kind, c.msg)
			}
			if c.kind == OutOfCycles && out.CyclesUsed != c.cycles {
				t.Fatalf("OutOfCycles used %d, want the limit %d", out.CyclesUsed, c.cycles)
			}
		})
	}
	// The engine keeps serving after the corpus.
	h := newMemHost()
	call(t, e, h, plainCounter, "", nil, true)
	if got := decodeRet(t, call(t, e, h, plainCounter, "increment", nil, false)); got != uint64(1) {
		t.Fatalf("after corpus: increment = %v", got)
	}
}

// Each call runs in a fresh child: module globals and class attributes
// written by one call are gone in the next.
func TestNoStateLeaksBetweenCalls(t *testing.T) {
	e := engine(t)
	src := `
import json
SEEN = []
class Actor:
    cache = {}
    def poke(self):
        SEEN.append(1)
        Actor.cache["x"] = Actor.cache.get("x", 0) + 1
        json.dumps_marker = 1
        return [len(SEEN), Actor.cache["x"]]
`
	h := newMemHost()
	for i := 0; i < 3; i++ {
		got := decodeRet(t, call(t, e, h, src, "poke", nil, false)).([]any)
		if got[0] != uint64(1) || got[1] != uint64(1) {
			t.Fatalf("call %d saw leaked state: %v", i, got)
		}
	}
}

func TestReadOnlyAndHostErrors(t *testing.T) {
	e := engine(t)
	h := newMemHost()
	call(t, e, h, sdkCounter, "", nil, true)
	inv := &Invocation{Actor: addr(1), Handler: "increment", Code: []byte(sdkCounter), CyclesLimit: 1_000_000,
		CellsLimit: 10_000, ReadOnly: true}
	out, err := e.Execute(context.Background(), inv, h)
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != ReadOnlyViolation {
		t.Fatalf("read-only write: %+v", out.Err)
	}
	// Plain actor mutating state in a read-only call.
	call(t, e, h, plainCounter, "", nil, true)
	inv = &Invocation{Actor: addr(1), Handler: "increment", Code: []byte(plainCounter), CyclesLimit: 1_000_000,
		CellsLimit: 10_000, ReadOnly: true}
	out, err = e.Execute(context.Background(), inv, h)
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != ReadOnlyViolation {
		t.Fatalf("plain read-only write: %+v", out.Err)
	}
	// Host errors are catchable; uncaught they are HostError.
	src := `
from cowboy_sdk import actor, runtime, HostError
@actor
class A:
    def pay(self, amount):
        runtime.transfer("0x" + "ab" * 20, amount)
        return runtime.balance("0x" + "ab" * 20)
    def safe_pay(self, amount):
        try:
            runtime.transfer("0x" + "ab" * 20, amount)
        except HostError as e:
            return str(e)
        return "ok"
    def send(self):
        return runtime.send("0x" + "cd" * 20, "ping", {"n": 1}, 0)
    def rand(self):
        return runtime.randomness("lottery")
`
	if got := decodeRet(t, call(t, e, h, src, "pay", []any{10}, false)); got.(uint64) != 10 {
		t.Fatalf("balance = %v", got)
	}
	out = call(t, e, h, src, "pay", []any{5000}, false)
	if out.Err == nil || out.Err.Kind != HostError || !strings.Contains(out.Err.Message, "insufficient balance") {
		t.Fatalf("transfer failure: %+v", out.Err)
	}
	if got := decodeRet(t, call(t, e, h, src, "safe_pay", []any{5000}, false)); got != "insufficient balance" {
		t.Fatalf("safe_pay = %v", got)
	}
	if got := decodeRet(t, call(t, e, h, src, "send", nil, false)).([]byte); len(got) != 32 || len(h.sends) != 1 {
		t.Fatalf("send id %x sends %v", got, h.sends)
	}
	if got := decodeRet(t, call(t, e, h, src, "rand", nil, false)).([]byte); len(got) != 32 {
		t.Fatalf("randomness %x", got)
	}
	// Out of cells: storage writes beyond the cells limit.
	big := `
from cowboy_sdk import actor
@actor
class A:
    def fill(self):
        for i in range(1000):
            self.storage["k%d" % i] = "v" * 100
`
	inv = &Invocation{Actor: addr(1), Handler: "fill", Code: []byte(big), CyclesLimit: 10_000_000, CellsLimit: 5_000,
		Value: big0()}
	out, err = e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != OutOfCells || out.CellsUsed != 5_000 {
		t.Fatalf("out of cells: %+v %d", out.Err, out.CellsUsed)
	}
}

func big0() *big.Int { return new(big.Int) }

func TestLibraries(t *testing.T) {
	e := engine(t)
	lib := `
def double(x):
    return x * 2
RATE = 7
`
	src := `
import mathlib
from mathlib import RATE
class Actor:
    def go(self, v):
        return mathlib.double(v) + RATE
`
	inv := &Invocation{Actor: addr(1), Handler: "go", Code: []byte(src), Payload: cborOf(t, []any{20}),
		Libraries: map[string][]byte{"mathlib": []byte(lib)}, CyclesLimit: 1_000_000, CellsLimit: 10_000}
	out, err := e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeRet(t, out); got != uint64(47) {
		t.Fatalf("go = %v", got)
	}
	// A library is validated like an actor.
	inv.Libraries = map[string][]byte{"mathlib": []byte("import os\n")}
	out, err = e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != ValidationFailed {
		t.Fatalf("bad library: %+v", out.Err)
	}
	// A bad library cannot be swallowed by the importing actor.
	inv.Code = []byte("try:\n    import mathlib\nexcept Exception:\n    pass\nclass Actor:\n    def go(self, v):\n        return v\n")
	inv.Libraries = map[string][]byte{"mathlib": []byte("x = ().__class__\n")}
	out, err = e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != ValidationFailed || !strings.Contains(out.Err.Message, "library mathlib") {
		t.Fatalf("swallowed bad library: %+v", out.Err)
	}
	inv.Code = []byte(src)
	// Unresolved library.
	inv.Libraries = nil
	out, err = e.Execute(context.Background(), inv, newMemHost())
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || out.Err.Kind != ActorException || !strings.Contains(out.Err.Message, "module not allowed: mathlib") {
		t.Fatalf("missing library: %+v", out.Err)
	}
}

var _ = errors.Is
