package pvm

import (
	"context"
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
