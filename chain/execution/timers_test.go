package execution_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/timers/timerlane"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

const timerActor = `from cowboy_sdk import actor, runtime

@actor
class Clock:
    def __init__(self):
        self.storage["fired"] = []
        self.storage["ticks"] = []

    def schedule(self, height, data, gba=None):
        tid = runtime.set_timer(height, "on_timer", data, gba)
        self.storage["tid"] = tid
        return tid

    def on_timer(self, data):
        f = self.storage["fired"]
        f.append([runtime.block_info()["height"], data])
        self.storage["fired"] = f

    def every(self, n, gba=None):
        tid = runtime.set_interval(n, "tick", None, gba)
        self.storage["iv"] = tid
        return tid

    def tick(self):
        t = self.storage["ticks"]
        t.append(runtime.block_info()["height"])
        self.storage["ticks"] = t

    def cancel(self):
        return runtime.cancel_timer(self.storage["iv"])

    def drain(self, to):
        runtime.transfer(to, runtime.balance())

    def get(self, k):
        return self.storage.get(k)
`

const gbaActor = `from cowboy_sdk import actor

@actor
class Bidder:
    def __init__(self, tip):
        self.storage["tip"] = tip

    def get_gas_bid(self, ctx):
        tip = self.storage["tip"]
        return [1500000, 10000, ctx["basefee_cycle"] * 2 + tip, ctx["basefee_cell"] * 2, tip, 0]
`

func auditSupply(t *testing.T, c *chain) {
	t.Helper()
	if err := c.st.View(func(v *store.View) error {
		_, err := node.AuditSupply(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func timerEvents(rs []*types.Receipt, topic string) []timerlane.TimerEvent {
	var out []timerlane.TimerEvent
	for _, r := range rs {
		for _, ev := range r.Events {
			if ev.Topic == topic && ev.Emitter == types.TimerEscrowAddress {
				var te timerlane.TimerEvent
				if err := codec.Unmarshal(ev.Data, &te); err != nil {
					panic(err)
				}
				out = append(out, te)
			}
		}
	}
	return out
}

func deployValue(c *chain, key *ecdsa.PrivateKey, code, salt string, value *big.Int, initArgs []byte) types.Address {
	c.t.Helper()
	rs := c.ok(c.txValue(key, nil, &types.Deploy{Code: types.Bytes(code), Salt: types.Bytes(salt), InitArgs: initArgs, Requires: testRequires}, value))
	return *rs[0].Created
}

func TestTimerOneShotFiresAndRefunds(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	clock := deployValue(c, alice, timerActor, "c", cby(1), nil)
	s := c.head().Height + 1
	rs := c.ok(c.tx(alice, &clock, &types.Call{Handler: "schedule", Args: cborArgs([]any{s + 3, map[string]any{"n": 7}})}, 0))
	sched := timerEvents(rs, timerlane.TopicTimerScheduled)
	if len(sched) != 1 || sched[0].Target != s+3 || sched[0].Owner != clock || sched[0].Amount.Sign() <= 0 {
		t.Fatalf("scheduled events %+v", sched)
	}
	id := sched[0].ID
	if got := balanceOf(t, c, types.TimerEscrowAddress); got.Cmp(sched[0].Amount) != 0 {
		t.Fatalf("escrow holds %s, want deposit %s", got, sched[0].Amount)
	}
	auditSupply(t, c)
	for h := s + 1; h < s+3; h++ {
		if rs := c.ok(); len(rs) != 0 {
			t.Fatalf("height %d: unexpected receipts %+v", h, rs)
		}
	}
	before := balanceOf(t, c, clock)
	rs = c.ok()
	if len(rs) != 1 || rs[0].TxHash != timerlane.TimerReceiptHash(id, s+3) || rs[0].CyclesUsed == 0 || rs[0].FeePaid.Sign() <= 0 {
		t.Fatalf("firing block receipts %+v", rs)
	}
	fired := timerEvents(rs, timerlane.TopicTimerFired)
	if len(fired) != 1 || fired[0].ID != id || fired[0].Amount.Cmp(sched[0].Amount) != 0 {
		t.Fatalf("fired events %+v", fired)
	}
	got := c.query(clock, "get", []any{"fired"}).([]any)
	if len(got) != 1 || got[0].([]any)[0] != s+3 {
		t.Fatalf("handler saw %v", got)
	}
	if b := balanceOf(t, c, types.TimerEscrowAddress); b.Sign() != 0 {
		t.Fatalf("escrow keeps %s after the one-shot fired", b)
	}
	want := new(big.Int).Add(before, sched[0].Amount)
	want.Sub(want, rs[0].FeePaid)
	if got := balanceOf(t, c, clock); got.Cmp(want) != 0 {
		t.Fatalf("owner balance %s, want %s (deposit back, fee paid)", got, want)
	}
	auditSupply(t, c)
	// The record is gone; nothing fires again.
	c.st.View(func(v *store.View) error {
		if _, err := c.ex.Timers().Get(state.NewOverlay(v), id); err == nil {
			t.Fatal("fired one-shot timer still stored")
		}
		return nil
	})
	if rs := c.ok(); len(rs) != 0 {
		t.Fatalf("receipts after firing: %+v", rs)
	}
	// Queries cannot schedule.
	err := c.st.View(func(v *store.View) error {
		_, _, err := c.ex.Query(context.Background(), v, execution.BlockEnv{Height: v.Head().Height}, clock, types.Address{}, "schedule", cborArgs([]any{v.Head().Height + 5, nil}))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("read-only set_timer: %v", err)
	}
	// A height not in the future is refused.
	rs = c.block(c.tx(alice, &clock, &types.Call{Handler: "schedule", Args: cborArgs([]any{c.head().Height, nil})}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "not in the future") {
		t.Fatalf("past height: %+v", rs[0])
	}
}

func TestTimerIntervalAndCancel(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	clock := deployValue(c, alice, timerActor, "c", cby(1), nil)
	s := c.head().Height + 1
	rs := c.ok(c.tx(alice, &clock, &types.Call{Handler: "every", Args: cborArgs([]any{2})}, 0))
	dep := timerEvents(rs, timerlane.TopicTimerScheduled)[0].Amount
	for h := s + 1; h <= s+6; h++ {
		rs := c.ok()
		if n := len(timerEvents(rs, timerlane.TopicTimerFired)); (h-s)%2 == 0 && n != 1 || (h-s)%2 == 1 && n != 0 {
			t.Fatalf("height %d: %d firings", h, n)
		}
	}
	ticks := c.query(clock, "get", []any{"ticks"}).([]any)
	if len(ticks) != 3 || ticks[0] != s+2 || ticks[1] != s+4 || ticks[2] != s+6 {
		t.Fatalf("ticks %v", ticks)
	}
	if b := balanceOf(t, c, types.TimerEscrowAddress); b.Cmp(dep) != 0 {
		t.Fatalf("escrow %s while the interval runs, want %s", b, dep)
	}
	rs = c.ok(c.tx(alice, &clock, &types.Call{Handler: "cancel"}, 0))
	var refund *big.Int
	codec.Unmarshal(rs[0].Return, &refund)
	if refund.Cmp(dep) != 0 || len(timerEvents(rs, timerlane.TopicTimerCancelled)) != 1 {
		t.Fatalf("cancel refunded %s (deposit %s), events %+v", refund, dep, rs[0].Events)
	}
	for i := 0; i < 3; i++ {
		if rs := c.ok(); len(rs) != 0 {
			t.Fatalf("interval fired after cancel: %+v", rs)
		}
	}
	if b := balanceOf(t, c, types.TimerEscrowAddress); b.Sign() != 0 {
		t.Fatalf("escrow %s after cancel", b)
	}
	auditSupply(t, c)
	// Cancelling again is a catchable error, not a block failure.
	rs = c.block(c.tx(alice, &clock, &types.Call{Handler: "cancel"}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "no pending timer") {
		t.Fatalf("second cancel: %+v", rs[0])
	}
}

func TestTimerOwnerCannotPay(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	clock := deployValue(c, alice, timerActor, "c", cby(1), nil)
	s := c.head().Height + 1
	sink := types.Address{0x5e}
	rs := c.ok(c.tx(alice, &clock, &types.Call{Handler: "every", Args: cborArgs([]any{3})}, 0),
		c.tx(alice, &clock, &types.Call{Handler: "drain", Args: cborArgs([]any{sink[:]})}, 0))
	_ = rs
	c.ok()
	c.ok()
	rs = c.block()
	if len(rs) != 1 || rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InsufficientBalance") || rs[0].FeePaid.Sign() != 0 {
		t.Fatalf("broke owner: %+v", rs)
	}
	if c.head().Height != s+3 {
		t.Fatalf("fired at %d, want %d", c.head().Height, s+3)
	}
	if ticks := c.query(clock, "get", []any{"ticks"}).([]any); len(ticks) != 0 {
		t.Fatalf("handler ran without payment: %v", ticks)
	}
	auditSupply(t, c)
}

// TestTimerBidsUnderSaturatedLane: two GBAs each bid 1,500,000 cycles, so
// only one timer fits in the 2,000,000-cycle lane per block. A high bidder
// fires every block; the low bidder's one-shot is deferred until the
// anti-starvation boost lets it through, then fires. Two independent stores
// replaying the same blocks agree on every root and receipt.
func TestTimerBidsUnderSaturatedLane(t *testing.T) {
	alice, _ := crypto.HexToECDSA("8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63")
	var roots [2][]types.Hash
	var rcpts [2][][]byte
	var blocks [][]*types.Tx
	for run := 0; run < 2; run++ {
		c := newChainWithGenesisKey(t, alice)
		apply := func(txs ...*types.Tx) []*types.Receipt {
			rs := c.ok(txs...)
			roots[run] = append(roots[run], c.head().StateRoot)
			rcpts[run] = append(rcpts[run], codec.MustMarshal(rs))
			return rs
		}
		if run == 0 {
			blocks = [][]*types.Tx{
				{c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(timerActor), Salt: types.Bytes("c"), Requires: testRequires}, cby(10))},
				{c.tx(alice, nil, &types.Deploy{Code: types.Bytes(gbaActor), Salt: types.Bytes("hi"), InitArgs: cborArgs([]any{16})}, 0),
					c.tx(alice, nil, &types.Deploy{Code: types.Bytes(gbaActor), Salt: types.Bytes("lo"), InitArgs: cborArgs([]any{1})}, 0)},
			}
		}
		owner := types.PubkeyToAddress(alice.PublicKey)
		clock := types.ActorAddress(owner, []byte("c"), types.CodeHash([]byte(timerActor)))
		hi := types.ActorAddress(owner, []byte("hi"), types.CodeHash([]byte(gbaActor)))
		lo := types.ActorAddress(owner, []byte("lo"), types.CodeHash([]byte(gbaActor)))
		for _, b := range blocks[:2] {
			apply(b...)
		}
		s := c.head().Height + 1
		if run == 0 {
			blocks = append(blocks, []*types.Tx{
				c.tx(alice, &clock, &types.Call{Handler: "every", Args: cborArgs([]any{1, hi[:]})}, 0),
				c.tx(alice, &clock, &types.Call{Handler: "schedule", Args: cborArgs([]any{s + 1, "late", lo[:]})}, 0),
			})
		}
		apply(blocks[2]...)
		var loFired uint64
		for h := s + 1; h <= s+10; h++ {
			rs := apply()
			fired := timerEvents(rs, timerlane.TopicTimerFired)
			if len(fired) != 1 {
				t.Fatalf("height %d: %d timers fired, the lane fits one", h, len(fired))
			}
			if fired[0].Handler == "on_timer" {
				loFired = h
				if fired[0].Deferrals == 0 {
					t.Fatalf("low bidder fired without being deferred")
				}
			} else if loFired == 0 && h > s+1 && len(timerEvents(rs, timerlane.TopicTimerDeferred)) != 1 {
				t.Fatalf("height %d: low bidder not deferred: %+v", h, rs)
			}
		}
		if loFired == 0 {
			t.Fatal("low bidder starved")
		}
		if got := c.query(clock, "get", []any{"fired"}).([]any); len(got) != 1 || got[0].([]any)[0] != loFired || got[0].([]any)[1] != "late" {
			t.Fatalf("low bidder's handler saw %v", got)
		}
		auditSupply(t, c)
	}
	for i := range roots[0] {
		if roots[0][i] != roots[1][i] || string(rcpts[0][i]) != string(rcpts[1][i]) {
			t.Fatalf("block %d differs between stores", i+1)
		}
	}
}

func cby(n int64) *big.Int { return genesis.CBY(n) }

const pairActor = `from cowboy_sdk import actor, runtime

@actor
class Pair:
    def __init__(self):
        self.storage["ran"] = []

    def arm(self, height):
        a = runtime.set_timer(height, "hit", "a")
        b = runtime.set_timer(height, "hit", "b")
        self.storage["ids"] = {"a": a, "b": b}

    def hit(self, who):
        other = "b" if who == "a" else "a"
        runtime.cancel_timer(self.storage["ids"][other])
        r = self.storage["ran"]
        r.append(who)
        self.storage["ran"] = r

    def get_ran(self):
        return self.storage["ran"]
`

// TestTimerCancelledByEarlierTimer: two timers due in one block cancel each
// other; the first to run wins, the other is skipped (deposit refunded).
func TestTimerCancelledByEarlierTimer(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	pair := deployValue(c, alice, pairActor, "p", cby(1), nil)
	s := c.head().Height + 1
	c.ok(c.tx(alice, &pair, &types.Call{Handler: "arm", Args: cborArgs([]any{s + 1})}, 0))
	rs := c.ok()
	if len(rs) != 1 || len(timerEvents(rs, timerlane.TopicTimerFired)) != 1 || len(timerEvents(rs, timerlane.TopicTimerCancelled)) != 1 {
		t.Fatalf("receipts %+v", rs)
	}
	if ran := c.query(pair, "get_ran", nil).([]any); len(ran) != 1 {
		t.Fatalf("handlers ran: %v", ran)
	}
	if b := balanceOf(t, c, types.TimerEscrowAddress); b.Sign() != 0 {
		t.Fatalf("escrow %s", b)
	}
	auditSupply(t, c)
}
