package execution_test

import (
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

const engineV1 = "VERSION = 1\n\ndef score(x):\n    return x * 10\n"
const engineV2 = "VERSION = 2\n\ndef score(x):\n    return x * 20\n"

const world = `from cowboy_sdk import actor, public, runtime
import engine

@actor
class World:
    def init(self, payload):
        runtime.emit_event("init", {"version": engine.VERSION})
        self.storage["v"] = engine.VERSION

    @public
    def version(self):
        return engine.VERSION

    @public
    def score(self, x):
        return engine.score(x)
`

func pins(t *testing.T, c *chain, actor types.Address) map[string]types.Hash {
	var out map[string]types.Hash
	if err := c.st.View(func(v *store.View) (err error) {
		out, err = actors.ReadPins(v, actor)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSeed000Example plays out seed 000 §4: Alice's actors pin engine v1,
// new deploys get v2, Bob's deploy fails with UnresolvedImport, and pins
// survive re-publish and removal.
func TestSeed000Example(t *testing.T) {
	alice, _ := genKey()
	bob, _ := genKey()
	c := newChain(t, alice, bob)
	rs := c.ok(c.tx(alice, nil, &types.PublishLibrary{Name: "engine", Code: types.Bytes(engineV1)}, 0))
	if len(rs[0].Events) != 1 || rs[0].Events[0].Topic != "LibraryPublished" {
		t.Fatalf("events %+v", rs[0].Events)
	}
	v1 := types.CodeHash([]byte(engineV1))
	aliceAddr := types.PubkeyToAddress(alice.PublicKey)
	if err := c.st.View(func(v *store.View) error {
		libs, err := actors.ReadLibraries(v, aliceAddr)
		if err != nil || len(libs) != 1 || libs[0].Name != "engine" || libs[0].CodeHash != v1 || libs[0].Publisher != aliceAddr {
			t.Fatalf("libraries %+v %v", libs, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var worlds []types.Address
	for _, salt := range []string{"w1", "w2", "w3"} {
		d := deployIn(world, salt)
		d.InitHandler, d.InitArgs = "init", codec.MustMarshal([]any{map[string]any{}})
		rs := c.ok(c.tx(alice, nil, d, 0))
		worlds = append(worlds, *rs[0].Created)
		if p := pins(t, c, *rs[0].Created); p["engine"] != v1 || len(p) != 1 {
			t.Fatalf("pins %v", p)
		}
		c.st.View(func(v *store.View) error {
			if o, err := actors.ReadActorOwner(v, *rs[0].Created); err != nil || o == nil || *o != aliceAddr {
				t.Fatalf("owner %v %v", o, err)
			}
			return nil
		})
	}
	c.ok(c.tx(alice, nil, &types.PublishLibrary{Name: "engine", Code: types.Bytes(engineV2)}, 0))
	for _, w := range worlds {
		if got := c.query(w, "version", nil); got != uint64(1) {
			t.Fatalf("old actor sees engine %v after re-publish", got)
		}
	}
	d := deployIn(world, "w4")
	d.InitHandler, d.InitArgs = "init", codec.MustMarshal([]any{map[string]any{}})
	rs = c.ok(c.tx(alice, nil, d, 0))
	if got := c.query(*rs[0].Created, "score", []any{2}); got != uint64(40) {
		t.Fatalf("new deploy should use v2: %v", got)
	}
	// Bob has no engine: UnresolvedImport, atomically.
	rs = c.block(c.tx(bob, nil, d, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, `UnresolvedImport { name: "engine" }`) {
		t.Fatalf("bob: %+v", rs[0])
	}
	// Removal: existing actors keep working; new deploys cannot pick it up.
	c.ok(c.tx(alice, nil, &types.RemoveLibrary{Name: "engine"}, 0))
	if got := c.query(worlds[0], "score", []any{3}); got != uint64(30) {
		t.Fatalf("pinned actor after removal: %v", got)
	}
	d5 := deployIn(world, "w5")
	rs = c.block(c.tx(alice, nil, d5, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "UnresolvedImport") {
		t.Fatalf("deploy after removal: %+v", rs[0])
	}
	// Library names follow the identifier rule; cross-checks happen at admission too.
	if _, err := c.ex.CheckTx(c.tx(alice, nil, &types.PublishLibrary{Name: "9bad", Code: types.Bytes(engineV1)}, 0)); err == nil {
		t.Fatal("bad library name admitted")
	}
	c.nonce[types.PubkeyToAddress(alice.PublicKey)]--
	// Pin rows are unreachable from self.storage: a storage write to the
	// pin key namespace only touches the actor's own storage prefix.
	_ = actors.PinKey
}

const pingPong = `from cowboy_sdk import actor, runtime

@actor
class Player:
    def __init__(self):
        self.storage["hits"] = 0

    def serve(self, other, rounds):
        runtime.send(other, "ping", [runtime.self_address(), rounds])

    def ping(self, sender, rounds):
        self.storage["hits"] += 1
        runtime.emit_event("ping", {"rounds": rounds})
        if rounds > 1:
            runtime.send(sender, "ping", [runtime.self_address(), rounds - 1])

    def boom(self):
        self.storage["hits"] = 999
        raise ValueError("boom")

    def fanout(self, other, n):
        for i in range(n):
            runtime.send(other, "boom", [])
        self.storage["hits"] = -1

    def hits(self):
        return self.storage["hits"]
`

func TestMessagingTree(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.tx(alice, nil, deployIn(pingPong, "a"), 0), c.tx(alice, nil, deployIn(pingPong, "b"), 0))
	a, b := *rs[0].Created, *rs[1].Created
	rs = c.ok(c.tx(alice, &a, &types.Call{Handler: "serve", Args: codec.MustMarshal([]any{b[:], 5})}, 0))
	r := rs[0]
	if len(r.Messages) != 5 {
		t.Fatalf("%d messages, want 5: %+v", len(r.Messages), r.Messages)
	}
	for i, m := range r.Messages {
		if m.Status != types.ReceiptSuccess || m.Depth != uint64(i+1) || m.Parent != int64(i-1) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	if r.FailedMessage != nil {
		t.Fatalf("no message failed, receipt names message %d", *r.FailedMessage)
	}
	if c.query(a, "hits", nil) != uint64(2) || c.query(b, "hits", nil) != uint64(3) {
		t.Fatal("hit counts")
	}
	// Failing handlers revert only their own effects; the sender's stand.
	rs = c.ok(c.tx(alice, &a, &types.Call{Handler: "fanout", Args: codec.MustMarshal([]any{b[:], 3})}, 0))
	for _, m := range rs[0].Messages {
		if m.Status != types.ReceiptFailed || !strings.Contains(m.Error, "boom") {
			t.Fatalf("message %+v", m)
		}
	}
	// The receipt names the first message that failed on its own.
	if fm := rs[0].FailedMessage; fm == nil || *fm != 0 {
		t.Fatalf("FailedMessage = %v, want 0", fm)
	}
	if c.query(a, "hits", nil) != int64(-1) || c.query(b, "hits", nil) != uint64(3) {
		t.Fatalf("effects: a=%v b=%v", c.query(a, "hits", nil), c.query(b, "hits", nil))
	}
	// Depth cap: a 40-round rally stops at depth 32 with a clear error.
	rs = c.block(c.tx(alice, &a, &types.Call{Handler: "serve", Args: codec.MustMarshal([]any{b[:], 40})}, 0))
	last := rs[0].Messages[len(rs[0].Messages)-1]
	if len(rs[0].Messages) != 32 || !strings.Contains(last.Error, "depth") {
		t.Fatalf("depth cap: %d messages, last %+v", len(rs[0].Messages), last)
	}
	if fm := rs[0].FailedMessage; fm == nil || *fm != 31 {
		t.Fatalf("depth cap: FailedMessage = %v, want 31 (the message whose send hit the cap)", fm)
	}
}

const spinner = `class Actor:
    def __init__(self):
        self.n = 0

    def spin(self):
        while True:
            self.n += 1

    def poke(self):
        self.n += 1
        return self.n
`

func TestHostileActorsAreContained(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.tx(alice, nil, deployIn(spinner, "x"), 0))
	a := *rs[0].Created
	rs = c.block(c.tx(alice, &a, &types.Call{Handler: "spin"}, 0), c.tx(alice, &a, &types.Call{Handler: "poke"}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "ActorBlockCycles") {
		t.Fatalf("spin: %+v", rs[0])
	}
	// The per-block budget is spent: the next call in the same block fails too...
	if rs[1].Status != types.ReceiptFailed {
		t.Fatalf("poke in the same block: %+v", rs[1])
	}
	// ...and succeeds in the next block, with the spin's effects reverted.
	rs = c.ok(c.tx(alice, &a, &types.Call{Handler: "poke"}, 0))
	var n uint64
	codec.Unmarshal(rs[0].Return, &n)
	if n != 1 {
		t.Fatalf("state after revert: %d", n)
	}
}

func TestDedupRowsExpire(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	ex, err := execution.New(execution.Config{ChainID: c.g.ChainID, Fees: c.g.Fees, VM: sharedEngine(t), Limits: execution.ActorLimits{DedupWindow: 3}})
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	rs := c.ok(c.tx(alice, nil, deployIn(pingPong, "a"), 0), c.tx(alice, nil, deployIn(pingPong, "b"), 0))
	a, b := *rs[0].Created, *rs[1].Created
	c.ok(c.tx(alice, &a, &types.Call{Handler: "serve", Args: codec.MustMarshal([]any{b[:], 2})}, 0))
	count := func() int {
		n := 0
		c.st.View(func(v *store.View) error {
			return v.Scan([]byte{0x09}, func(_, _ []byte) error { n++; return nil })
		})
		return n
	}
	if count() != 4 { // two messages: a lookup row and an expiry row each
		t.Fatalf("%d dedup rows after delivery", count())
	}
	for i := 0; i < 3; i++ {
		c.ok()
	}
	if count() != 0 {
		t.Fatalf("%d dedup rows after the window", count())
	}
}

// TestActorDeterminismAcrossDataDirs runs the same deploys, library
// re-publish and calls on two independent stores: identical roots and
// receipts at every height.
func TestActorDeterminismAcrossDataDirs(t *testing.T) {
	alice, _ := genKey()
	var roots [2][]types.Hash
	var rcpts [2][][]byte
	for run := 0; run < 2; run++ {
		c := newChainWithGenesisKey(t, alice)
		blocks := [][]*types.Tx{
			{c.tx(alice, nil, &types.PublishLibrary{Name: "engine", Code: types.Bytes(engineV1)}, 0)},
			{c.tx(alice, nil, deployIn(world, "d1"), 0), c.tx(alice, nil, deployIn(pingPong, "p1"), 0), c.tx(alice, nil, deployIn(pingPong, "p2"), 0)},
			{c.tx(alice, nil, &types.PublishLibrary{Name: "engine", Code: types.Bytes(engineV2)}, 0)},
		}
		for _, txs := range blocks {
			rs := c.ok(txs...)
			roots[run] = append(roots[run], c.head().StateRoot)
			rcpts[run] = append(rcpts[run], codec.MustMarshal(rs))
		}
		w := types.ActorAddress(types.PubkeyToAddress(alice.PublicKey), []byte("d1"), types.CodeHash([]byte(world)))
		p1 := types.ActorAddress(types.PubkeyToAddress(alice.PublicKey), []byte("p1"), types.CodeHash([]byte(pingPong)))
		p2 := types.ActorAddress(types.PubkeyToAddress(alice.PublicKey), []byte("p2"), types.CodeHash([]byte(pingPong)))
		rs := c.ok(c.tx(alice, &w, &types.Call{Handler: "score", Args: codec.MustMarshal([]any{4})}, 0),
			c.tx(alice, &p1, &types.Call{Handler: "serve", Args: codec.MustMarshal([]any{p2[:], 6})}, 0))
		roots[run] = append(roots[run], c.head().StateRoot)
		rcpts[run] = append(rcpts[run], codec.MustMarshal(rs))
	}
	for i := range roots[0] {
		if roots[0][i] != roots[1][i] || string(rcpts[0][i]) != string(rcpts[1][i]) {
			t.Fatalf("block %d differs between data directories", i+1)
		}
	}
}

const hostile = `class Actor:
    def __init__(self):
        self.n = 0

    def pow_bomb(self):
        return 2 ** 10 ** 9

    def str_bomb(self):
        return "x" * 10 ** 9

    def sum_bomb(self):
        return sum(range(10 ** 12))

    def mem_bomb(self):
        a = []
        while True:
            a.append([0] * 1000)

    def deep(self, n=0):
        return self.deep(n + 1)

    def regex_bomb(self):
        import re
        return re.match("(a+)+$", "a" * 40 + "b")

    def output_bomb(self):
        return "y" * 5000000

    def ok(self):
        self.n += 1
        return self.n
`

// TestHostileCorpusThroughTheChain: every hostile handler ends in a failed,
// fee-paying receipt with a clear error, and the actor still works after.
func TestHostileCorpusThroughTheChain(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.tx(alice, nil, deployIn(hostile, "h"), 0))
	a := *rs[0].Created
	for _, h := range []string{"pow_bomb", "str_bomb", "sum_bomb", "mem_bomb", "deep", "regex_bomb", "output_bomb"} {
		rs := c.block(c.tx(alice, &a, &types.Call{Handler: h}, 0))
		r := rs[0]
		if r.Status != types.ReceiptFailed || r.FeePaid.Sign() <= 0 || r.Error == "" {
			t.Fatalf("%s: %+v", h, r)
		}
		t.Logf("%-12s -> %s (%d cycles)", h, r.Error, r.CyclesUsed)
	}
	rs = c.ok(c.tx(alice, &a, &types.Call{Handler: "ok"}, 0))
	var n uint64
	codec.Unmarshal(rs[0].Return, &n)
	if n != 1 {
		t.Fatalf("state after the corpus: %d", n)
	}
}
