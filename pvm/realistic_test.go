package pvm

import (
	"context"
	"fmt"
	"testing"
)

const tokenLib = `
from dataclasses import dataclass, field
from typing import Dict, List, Optional

class TokenError(Exception):
    pass

@dataclass
class Ledger:
    balances: Dict[str, int] = field(default_factory=dict)
    history: List[str] = field(default_factory=list)

    def move(self, src: str, dst: str, amount: int) -> None:
        if amount <= 0:
            raise TokenError(f"bad amount {amount}")
        if self.balances.get(src, 0) < amount:
            raise TokenError("insufficient funds: %s has %d" % (src, self.balances.get(src, 0)))
        self.balances[src] -= amount
        self.balances[dst] = self.balances.get(dst, 0) + amount
        self.history.append("{}->{}:{}".format(src, dst, amount))
`

const tokenActor = `
import json
import hashlib
from enum import Enum
from functools import reduce
from itertools import islice
from collections import defaultdict, namedtuple
from cowboy_sdk import actor, public, runtime
from tokenlib import Ledger, TokenError

Top = namedtuple("Top", ["who", "amount"])

class Kind(Enum):
    MINT = 1
    MOVE = 2

@actor
class Token:
    def __init__(self, supply):
        self.storage["balances"] = {"owner": supply}
        self.storage["history"] = []

    def _ledger(self):
        return Ledger(dict(self.storage["balances"]), list(self.storage["history"]))

    def _save(self, l):
        self.storage["balances"] = l.balances
        self.storage["history"] = l.history

    @public
    def transfer(self, src, dst, amount):
        l = self._ledger()
        try:
            l.move(src, dst, amount)
        except TokenError as e:
            return {"ok": False, "error": str(e)}
        self._save(l)
        runtime.emit_event("Transfer", {"from": src, "to": dst, "amount": amount, "kind": Kind.MOVE.name})
        return {"ok": True}

    @public
    def top(self, n=3):
        b = self.storage["balances"]
        ranked = sorted(b.items(), key=lambda kv: (-kv[1], kv[0]))
        tops = [Top(w, a)._asdict() for w, a in islice(ranked, n)]
        total = reduce(lambda x, y: x + y, b.values(), 0)
        groups = defaultdict(list)
        for who, amt in b.items():
            groups["rich" if amt >= total // 4 else "poor"].append(who)
        digest = hashlib.sha256(json.dumps(b).encode()).hexdigest()[:16]
        return {"top": tops, "total": total, "groups": dict(groups), "digest": digest,
                "pairs": [f"{i}:{w}" for i, (w, _) in enumerate(zip(b, range(10)))],
                "any_zero": any(v == 0 for v in b.values()), "max": max(b.values()), "min": min(b.values())}
`

func TestRealisticActor(t *testing.T) {
	e := engine(t)
	libs := map[string][]byte{"tokenlib": []byte(tokenLib)}
	h := newMemHost()
	run := func(handler string, payload any, init bool) any {
		inv := &Invocation{Actor: addr(5), Handler: handler, Code: []byte(tokenActor), Libraries: libs,
			CyclesLimit: 5_000_000, CellsLimit: 100_000, Init: init}
		if payload != nil {
			inv.Payload = cborOf(t, payload)
		}
		out, err := e.Execute(context.Background(), inv, h)
		if err != nil {
			t.Fatal(err)
		}
		if init {
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			return nil
		}
		return decodeRet(t, out)
	}
	imports, err := e.Validate(context.Background(), []byte(tokenActor))
	if err != nil || len(imports) != 1 || imports[0] != "tokenlib" {
		t.Fatalf("Validate: %v %v", imports, err)
	}
	if _, err := e.Validate(context.Background(), []byte(tokenLib)); err != nil {
		t.Fatalf("Validate lib: %v", err)
	}
	run("", []any{1000}, true)
	if r := run("transfer", []any{"owner", "alice", 300}, false).(map[any]any); r["ok"] != true {
		t.Fatalf("transfer: %v", r)
	}
	run("transfer", []any{"owner", "bob", 100}, false)
	r := run("transfer", []any{"bob", "carol", 500}, false).(map[any]any)
	if r["ok"] != false || r["error"] != "insufficient funds: bob has 100" {
		t.Fatalf("overdraft: %v", r)
	}
	top := run("top", []any{2}, false).(map[any]any)
	if top["total"] != uint64(1000) || top["max"] != uint64(600) || len(top["top"].([]any)) != 2 {
		t.Fatalf("top: %v", top)
	}
	t.Logf("top = %v", top)
	if len(h.events) != 2 {
		t.Fatalf("events: %v", h.events)
	}
}

// Language features survive the metering transformer unchanged.
func TestLanguageFeatures(t *testing.T) {
	src := `
import functools
from typing import Optional

COUNTER = 0

def bump():
    global COUNTER
    COUNTER += 1
    return COUNTER

class Base:
    kind = "base"
    def __init__(self, x):
        self.x = x
    @property
    def double(self):
        return self.x * 2
    @classmethod
    def make(cls, x):
        return cls(x)
    @staticmethod
    def twice(v):
        return v + v
    def __eq__(self, other):
        return isinstance(other, Base) and self.x == other.x
    def __hash__(self):
        return hash(self.x)
    def __len__(self):
        return self.x
    def __iter__(self):
        return iter(range(self.x))

class Child(Base):
    kind = "child"
    def __init__(self, x, y=0):
        super().__init__(x)
        self.y = y

def gen(n):
    for i in range(n):
        yield i * i
    yield from [100, 200]

def closure():
    total = 0
    def add(v):
        nonlocal total
        total += v
        return total
    return add

class Ctx:
    def __init__(self):
        self.log = []
    def __enter__(self):
        self.log.append("in")
        return self
    def __exit__(self, *exc):
        self.log.append("out")
        return False

class Actor:
    def run(self, seq, opt: Optional[int] = None):
        out = {}
        c = Child.make(3)
        out["oop"] = [c.double, c.kind, Base.twice(4), len(c), list(c), c == Child(3), {c: 1}[Child(3)]]
        out["gen"] = list(gen(3)) + [sum(x for x in gen(4) if x % 2 == 0)]
        add = closure()
        add(5)
        out["closure"] = add(6)
        with Ctx() as cx:
            out["with"] = 1
        out["ctx"] = cx.log
        try:
            1 / 0
        except ZeroDivisionError as e:
            out["exc"] = str(e)
        else:
            out["exc"] = "none"
        finally:
            out["fin"] = True
        i = 0
        while i < 3:
            i += 1
        else:
            out["while_else"] = i
        if (n := len(seq)) > 2:
            out["walrus"] = n
        match seq:
            case [first, *rest]:
                out["match"] = [first, rest]
            case _:
                out["match"] = None
        out["fmt"] = f"{c.x:03d}|{'x'!r}|{3.14159:.2f}|{seq[0]:>{4}}"
        out["lambda"] = sorted(seq, key=lambda v, k=2: -v * k)
        out["reduce"] = functools.reduce(lambda a, b: a * b, seq, 1)
        out["globals"] = [bump(), bump()]
        out["slices"] = [seq[1:], seq[::-1], "hello"[1:3]]
        out["unpack"] = [*seq, *(7, 8)]
        a, *b = seq
        out["star"] = [a, b]
        d = {**{"k": 1}, "j": 2}
        d["k"] += 10
        out["dict"] = d
        s = set(seq)
        s.add(99)
        s |= {100}
        out["set"] = sorted(s)
        out["bytes"] = bytes([1, 2]) + b"\x03"
        out["opt"] = opt
        out["chain"] = 1 < 2 < 3
        out["ternary"] = "a" if seq else "b"
        out["bool"] = [not seq, seq and 1, [] or 2]
        out["divmod"] = [divmod(17, 5), 7 // 2, 7 / 2, -7 % 3, 2 ** -1, 10 ** 18]
        return out
`
	out := call(t, engine(t), newMemHost(), src, "run", []any{[]any{1, 2, 3}}, false)
	got := decodeRet(t, out).(map[any]any)
	check := map[string]string{
		"oop":        "[6 child 8 3 [0 1 2] true 1]",
		"gen":        "[0 1 4 100 200 304]",
		"closure":    "11",
		"ctx":        "[in out]",
		"exc":        "division by zero",
		"while_else": "3",
		"walrus":     "3",
		"match":      "[1 [2 3]]",
		"fmt":        "003|'x'|3.14|   1",
		"lambda":     "[3 2 1]",
		"reduce":     "6",
		"globals":    "[1 2]",
		"slices":     "[[2 3] [3 2 1] el]",
		"unpack":     "[1 2 3 7 8]",
		"star":       "[1 [2 3]]",
		"dict":       "map[j:2 k:11]",
		"set":        "[1 2 3 99 100]",
		"bytes":      "[1 2 3]",
		"chain":      "true",
		"divmod":     "[[3 2] 3 3.5 2 0.5 1000000000000000000]",
	}
	for k, want := range check {
		if g := fmt.Sprint(got[k]); g != want {
			t.Errorf("%s = %s, want %s", k, g, want)
		}
	}
}

// Builtin types stay real types (subclassing, identity checks, match class
// patterns) while calls through them stay metered.
func TestBuiltinTypesStayTypes(t *testing.T) {
	src := `
import enum
class Color(str, enum.Enum):
    RED = "red"

class Bag(dict):
    def total(self):
        return sum(self.values())

class Actor:
    def run(self, v):
        b = Bag(a=1, b=2)
        kinds = []
        for x in [1, "s", [1], {"k": 1}, (1,), b"x"]:
            match x:
                case int():
                    kinds.append("int")
                case str():
                    kinds.append("str")
                case list():
                    kinds.append("list")
                case dict():
                    kinds.append("dict")
                case _:
                    kinds.append("other")
        conv = list(map(str, [1, 2]))
        f = list
        return [Color.RED.value, Color.RED == "red", b.total(), type(v) is list, type(b) == Bag,
                isinstance(b, dict), issubclass(Bag, (dict, list)), kinds, conv, f((1, 2)), type(3) is int]
    def bomb(self):
        f = list
        return len(f(range(10**12)))
`
	e := engine(t)
	got := fmt.Sprint(decodeRet(t, call(t, e, newMemHost(), src, "run", []any{[]any{1}}, false)))
	want := "[red true 3 true true true true [int str list dict other other] [1 2] [1 2] true]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	out := call(t, e, newMemHost(), src, "bomb", nil, false)
	if out.Err == nil || out.Err.Kind != OutOfCycles {
		t.Fatalf("indirect list() not metered: %+v", out.Err)
	}
	if _, err := e.Validate(context.Background(), []byte("list = [1]\n")); err == nil {
		t.Fatal("rebinding a builtin type name was accepted")
	}
}
