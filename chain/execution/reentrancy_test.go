package execution_test

import (
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

const guardedActor = `from cowboy_sdk import actor, runtime, nonreentrant, ReentrancyError

@actor
class Vault:
    def _count(self, name):
        self.storage[name] = self.storage.get(name, 0) + 1

    @nonreentrant
    def start(self, b, n):
        self._count("start")
        if n > 0:
            runtime.send(b, "bounce", [runtime.self_address(), "start", n - 1])

    def open(self, b, n):
        self._count("open")
        if n > 0:
            runtime.send(b, "bounce", [runtime.self_address(), "open", n - 1])

    def fan(self, b):
        runtime.send(runtime.self_address(), "start", [b, 0])
        runtime.send(runtime.self_address(), "start", [b, 0])

    @nonreentrant(key="vault")
    def deposit(self, b):
        self._count("deposit")
        runtime.send(b, "bounce", [runtime.self_address(), "withdraw", 0])

    @nonreentrant(key="vault")
    def withdraw(self, b, n):
        self._count("withdraw")

    def count(self, name):
        return self.storage.get(name, 0)

    def is_error_class(self):
        return issubclass(ReentrancyError, Exception)
`

const bouncerActor = `from cowboy_sdk import actor, runtime

@actor
class Bouncer:
    def bounce(self, a, handler, n):
        runtime.send(a, handler, [runtime.self_address(), n])
`

// Reentrancy guards (spec 002 §10, §12.3): a @nonreentrant handler
// reached again through another actor within one call chain fails with
// ReentrancyError and runs no second time; the same bounce through an
// unguarded handler re-enters; sibling deliveries and later transactions
// are not chains; handlers sharing a key guard each other.
func TestReentrancyGuard(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	deploy := func(code, salt string) types.Address {
		rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(code), Salt: types.Bytes(salt)}, genesis.CBY(1)))
		return *rs[0].Created
	}
	vault, bouncer := deploy(guardedActor, "v"), deploy(bouncerActor, "b")
	call := func(handler string, args ...any) *types.Receipt {
		t.Helper()
		return c.ok(c.tx(alice, &vault, &types.Call{Handler: handler, Args: cborArgs(args)}, 0))[0]
	}
	count := func(name string) uint64 {
		t.Helper()
		n, _ := c.query(vault, "count", []any{name}).(uint64)
		return n
	}
	// refused reports the one failed message record, which must be the
	// vault's handler, failing with ReentrancyError.
	refused := func(r *types.Receipt, handler string) {
		t.Helper()
		var failed []types.MessageRecord
		for _, m := range r.Messages {
			if m.Status != types.ReceiptSuccess {
				failed = append(failed, m)
			}
		}
		if len(failed) != 1 || failed[0].To != vault || failed[0].Handler != handler || !strings.Contains(failed[0].Error, "ReentrancyError") || !strings.Contains(failed[0].Error, "within one call chain") {
			t.Fatalf("want one %s refused with ReentrancyError, got %+v", handler, r.Messages)
		}
	}

	refused(call("start", bouncer[:], 3), "start")
	if n := count("start"); n != 1 {
		t.Fatalf("guarded handler ran %d times in one chain", n)
	}
	r := call("open", bouncer[:], 3)
	if n := count("open"); n != 4 || len(r.Messages) != 6 {
		t.Fatalf("unguarded bounce: %d entries, %d messages", n, len(r.Messages))
	}
	// Another transaction is another chain.
	refused(call("start", bouncer[:], 1), "start")
	if n := count("start"); n != 2 {
		t.Fatalf("second transaction: %d", n)
	}
	// Two sibling deliveries of start: neither is the other's ancestor.
	r = call("fan", bouncer[:])
	for _, m := range r.Messages {
		if m.Status != types.ReceiptSuccess {
			t.Fatalf("sibling deliveries refused: %+v", r.Messages)
		}
	}
	if n := count("start"); n != 4 {
		t.Fatalf("siblings: %d", n)
	}
	// A shared key: deposit → bouncer → withdraw is refused.
	refused(call("deposit", bouncer[:]), "withdraw")
	if count("deposit") != 1 || count("withdraw") != 0 {
		t.Fatalf("shared key: deposit %d withdraw %d", count("deposit"), count("withdraw"))
	}
	if v := c.query(vault, "is_error_class", nil); v != true {
		t.Fatalf("ReentrancyError is an exception class: %v", v)
	}
}
