package execution_test

import (
	"bytes"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// hoard is an actor whose storage outgrows the free 10 KiB.
const hoard = `from cowboy_sdk import actor, runtime

@actor
class Hoard:
    def __init__(self):
        self.storage["n"] = 0

    def fill(self, n, size):
        for i in range(n):
            self.storage["k" + str(1000 + i)] = "x" * size
        self.storage["n"] = n

    def bump(self):
        self.storage["n"] = self.storage["n"] + 1
        return self.storage["n"]

    def later(self, height, back):
        tid = runtime.set_timer(height, "bump", None)
        runtime.transfer(back, runtime.balance())
        return tid
`

// rentEpoch is the test's rent epoch in blocks.
const rentEpoch = 4

var testRent = rent.Params{EpochBlocks: rentEpoch, RatePico: 1_000_000_000_000_000, TargetBytes: 60_000,
	SweepPerBlock: 4, BondPerByte: 1000}

func stateRentChain(t *testing.T, p rent.Params, keys ...*ecdsa.PrivateKey) *chain {
	c := newChainWithGenesisKey(t, keys...)
	cfg := c.ex.Config()
	cfg.Rent = &p
	ex, err := execution.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	return c
}

// step applies txs in one block and audits total supply at the new height.
func (c *chain) step(txs ...*types.Tx) []*types.Receipt {
	c.t.Helper()
	rs := c.block(txs...)
	if err := c.st.View(func(v *store.View) error { _, err := node.AuditSupply(v); return err }); err != nil {
		c.t.Fatal(err)
	}
	return rs
}

// rejected applies tx, which must fail with code, and checks that the
// block's writes are those of an empty block apart from the sender's
// account (the fee) and the fee records (basefees, burned); then it
// commits the block.
func (c *chain) rejected(tx *types.Tx, code system.Code) {
	c.t.Helper()
	empty, err := c.apply(nil, execution.Verify)
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := c.apply([]*types.Tx{tx}, execution.Verify)
	if err != nil {
		c.t.Fatal(err)
	}
	wantCode(c.t, res.Receipts[0], code)
	from, _ := tx.Sender()
	skip := func(k []byte) bool {
		return bytes.Equal(k, state.AccountKey(from)) || state.HasPrefix(k, state.PrefixChain) ||
			bytes.HasPrefix(k, system.Key(types.DualBasefeeAddress)) ||
			bytes.Equal(k, []byte{timers.PrefixTimers, 0x09}) // the timer lane's record of the block's usage
	}
	writes := func(ws []state.Write) map[string]string {
		m := map[string]string{}
		for _, w := range ws {
			if !skip(w.Key) {
				m[string(w.Key)] = string(w.Value)
			}
		}
		return m
	}
	a, b := writes(empty.Writes), writes(res.Writes)
	if len(a) != len(b) {
		c.t.Fatalf("%s: the failed transaction wrote %d keys beyond the fee, an empty block %d", code, len(b), len(a))
	}
	for k, v := range a {
		if b[k] != v {
			c.t.Fatalf("%s: the failed transaction changed state key %x", code, k)
		}
	}
	c.step(tx)
}

func (c *chain) rentAccount(a types.Address) *rent.Account {
	c.t.Helper()
	var acc *rent.Account
	c.view(func(v *store.View) {
		var err error
		if acc, err = rent.ReadAccount(v, a); err != nil {
			c.t.Fatal(err)
		}
	})
	return acc
}

func (c *chain) rawAt(k []byte) []byte {
	var b []byte
	c.view(func(v *store.View) { b, _, _ = v.Get(k) })
	return b
}

func wantCode(t *testing.T, r *types.Receipt, code system.Code) {
	t.Helper()
	if r.Status == types.ReceiptSuccess || system.Code(r.Code) != code {
		t.Fatalf("receipt %v code %s (%s), want %s", r.Status, system.Code(r.Code), r.Error, code)
	}
}

func rentEvents(rs []*types.Receipt, topic string) int {
	n := 0
	for _, r := range rs {
		for _, ev := range r.Events {
			if ev.Emitter == types.RentModuleAddress && ev.Topic == topic {
				n++
			}
		}
	}
	return n
}

// TestStateRentLifecycle walks an actor through paying → overdue → warning
// → evicted → restored on a chain with 4-block rent epochs, with the bad
// inputs of issue #18 and total supply audited at every height.
func TestStateRentLifecycle(t *testing.T) {
	alice, _ := genKey()
	bob, _ := genKey()
	carol, _ := genKey()
	c := stateRentChain(t, testRent, alice, bob, carol)
	aliceA, bobA := types.PubkeyToAddress(alice.PublicKey), types.PubkeyToAddress(bob.PublicKey)
	rentAddr := types.RentModuleAddress

	rs := c.step(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(hoard), Salt: types.Bytes("h"), Requires: testRequires}, cby(1)))
	if rs[0].Status != types.ReceiptSuccess {
		t.Fatalf("deploy: %s", rs[0].Error)
	}
	h := *rs[0].Created
	// A pending timer (pruned at eviction), then the actor's balance goes
	// back: from here on it lives on prepaid rent.
	c.step(c.tx(alice, &h, &types.Call{Handler: "later", Args: cborArgs([]any{c.head().Height + 500, aliceA[:]})}, 0))
	c.step(c.tx(alice, &h, &types.Call{Handler: "fill", Args: cborArgs([]any{60, 1000})}, 0))
	acc := c.rentAccount(h)
	if acc == nil || acc.Status != rent.StatusActive {
		t.Fatalf("after fill: rent account %+v", acc)
	}

	// Bad input: a clear code, and no state change beyond the fee.
	nobody := types.Address{0x77}
	c.rejected(c.tx(bob, &rentAddr, &types.RentPay{Actor: nobody}, 1000), system.CodeRentNoActor)
	c.rejected(c.tx(carol, &rentAddr, &types.RentSponsor{Actor: h, Epochs: 1 << 62}, 0), system.CodeSponsorBalance)
	c.rejected(c.tx(bob, &rentAddr, &types.StorageBond{Actor: h, Quota: 2 << 20}, 0), system.CodeNotActorOwner)
	c.rejected(c.tx(alice, &rentAddr, &types.StorageBond{Actor: h, Quota: 9 << 20}, 0), system.CodeBadQuota)
	c.rejected(c.tx(alice, &rentAddr, &types.RentRestore{Actor: h}, 0), system.CodeNotDormant)

	// A storage bond: 4,096 bytes above the base quota, locked in 0x…0F.
	c.step(c.tx(alice, &rentAddr, &types.StorageBond{Actor: h, Quota: (1 << 20) + 4096}, 0))
	bond := big.NewInt(4096 * 1000)
	if got := balanceOf(t, c, rentAddr); got.Cmp(bond) != 0 {
		t.Fatalf("rent module holds %s after the bond, want %s", got, bond)
	}
	// Paying: bob sponsors two epochs (rent applies to the whole bonded quota).
	c.step(c.tx(bob, &rentAddr, &types.RentSponsor{Actor: h, Epochs: 2}, 0))
	if acc := c.rentAccount(h); acc.Prepaid.Sign() <= 0 || acc.Status != rent.StatusActive {
		t.Fatalf("after sponsorship: %+v", acc)
	}

	// Walk epochs until eviction, noting the standings.
	var snapshot []types.StorageEntry
	var overdueAt, warnAt, evictedAt uint64
	var all []*types.Receipt
	for c.head().Height < 200 && evictedAt == 0 {
		var txs []*types.Tx
		if overdueAt != 0 && warnAt == 0 {
			// Overdue actors stay fully functional.
			txs = append(txs, c.tx(alice, &h, &types.Call{Handler: "bump"}, 0))
		}
		rs := c.step(txs...)
		all = append(all, rs...)
		for _, r := range rs[:len(txs)] {
			if r.Status != types.ReceiptSuccess {
				t.Fatalf("call during grace failed: %s", r.Error)
			}
		}
		acc := c.rentAccount(h)
		e := c.head().Height / rentEpoch
		switch {
		case acc.Status == rent.StatusOverdue && overdueAt == 0:
			overdueAt = e
			if acc.OverdueSince != e {
				t.Fatalf("overdue since %d, seen at epoch %d", acc.OverdueSince, e)
			}
		case acc.Status == rent.StatusWarning && warnAt == 0:
			warnAt = e
			// The archive: what `cowboy actor archive` fetches before eviction.
			c.view(func(v *store.View) {
				var err error
				if snapshot, err = rent.StorageEntries(v, h); err != nil {
					t.Fatal(err)
				}
			})
		case acc.Status == rent.StatusEvicted:
			evictedAt = e
		}
	}
	if overdueAt == 0 || warnAt-overdueAt != 7 || evictedAt-overdueAt != 10 {
		t.Fatalf("overdue at epoch %d, warning at %d, evicted at %d: want warning N+8 and eviction N+11 (N+1 = %d)", overdueAt, warnAt, evictedAt, overdueAt)
	}
	if rentEvents(all, rent.TopicRentOverdue) != 1 || rentEvents(all, rent.TopicEvictionImminent) != 1 || rentEvents(all, rent.TopicActorEvicted) != 1 {
		t.Fatalf("events: overdue %d, imminent %d, evicted %d", rentEvents(all, rent.TopicRentOverdue), rentEvents(all, rent.TopicEvictionImminent), rentEvents(all, rent.TopicActorEvicted))
	}

	// Evicted: storage and timers pruned, bond burned; code, balance and
	// owner kept; calls fail with ActorDormant.
	acc = c.rentAccount(h)
	c.view(func(v *store.View) {
		left, _ := rent.StorageEntries(v, h)
		meta, _ := actors.ReadActorMeta(v, h)
		a, _ := state.ReadAccount(v, h)
		owner, _ := actors.ReadActorOwner(v, h)
		if len(left) != 0 || meta.StorageBytes != 0 || a.CodeHash == nil || owner == nil || *owner != aliceA {
			t.Fatalf("after eviction: %d entries, %d bytes, code %v, owner %v", len(left), meta.StorageBytes, a.CodeHash, owner)
		}
		if a.Balance.Sign() <= 0 {
			t.Fatal("the timer deposit was not refunded to the evicted actor")
		}
	})
	chunks, arch := rent.BuildArchive(snapshot)
	if acc.Archive == nil || acc.Archive.Root != arch.Root || len(chunks) < 2 {
		t.Fatalf("kept archive %+v, snapshot root %s over %d chunks", acc.Archive, arch.Root, len(chunks))
	}
	if got := balanceOf(t, c, rentAddr); got.Sign() != 0 {
		t.Fatalf("rent module still holds %s after the bond was forfeited", got)
	}
	if got := balanceOf(t, c, types.TimerEscrowAddress); got.Sign() != 0 {
		t.Fatalf("timer escrow still holds %s after eviction pruned the timer", got)
	}
	if ev := evictedEvent(t, all); ev.Timers != 1 || ev.Burned.Cmp(bond) != 0 || ev.Root != acc.Archive.Root {
		t.Fatalf("eviction event %+v", ev)
	}
	wantCode(t, c.step(c.tx(alice, &h, &types.Call{Handler: "bump"}, 0))[0], system.CodeActorDormant)

	// Restore: debt first, then the chunks in order, each verified.
	c.rejected(c.tx(bob, &rentAddr, &types.RentRestore{Actor: h, Entries: chunks[0]}, 0), system.CodeRentDebt)
	debt := new(big.Int).Set(acc.Debt)
	c.step(c.txValue(bob, &rentAddr, &types.RentPay{Actor: h}, debt))
	if acc := c.rentAccount(h); acc.Debt.Sign() != 0 || acc.Status != rent.StatusEvicted {
		t.Fatalf("after paying the debt: %+v", acc)
	}
	tampered := append([]types.StorageEntry(nil), chunks[0]...)
	tampered[0] = types.StorageEntry{Key: tampered[0].Key, Value: append(types.Bytes(nil), bytes.ToUpper(tampered[0].Value)...)}
	c.rejected(c.tx(bob, &rentAddr, &types.RentRestore{Actor: h, Entries: tampered}, 0), system.CodeRestoreMismatch)
	c.rejected(c.tx(bob, &rentAddr, &types.RentRestore{Actor: h, Index: 1, Entries: chunks[1]}, 0), system.CodeRestoreOrder)
	var restored []*types.Receipt
	for i, ch := range chunks {
		rs := c.step(c.tx(bob, &rentAddr, &types.RentRestore{Actor: h, Index: uint64(i), Entries: ch}, 0))
		if rs[0].Status != types.ReceiptSuccess {
			t.Fatalf("restore chunk %d: %s", i, rs[0].Error)
		}
		restored = append(restored, rs...)
	}
	if rentEvents(restored, rent.TopicActorRestored) != 1 {
		t.Fatal("no ActorRestored event")
	}
	c.view(func(v *store.View) {
		got, _ := rent.StorageEntries(v, h)
		if !bytes.Equal(codec.MustMarshal(got), codec.MustMarshal(snapshot)) {
			t.Fatal("restored storage differs from the archive")
		}
	})
	// Active again; bob prepays so the next sweep does not find it short.
	c.step(c.tx(bob, &rentAddr, &types.RentSponsor{Actor: h, Epochs: 4}, 0))
	rs = c.step(c.tx(alice, &h, &types.Call{Handler: "bump"}, 0))
	if rs[0].Status != types.ReceiptSuccess {
		t.Fatalf("call after restore: %s", rs[0].Error)
	}
	if acc := c.rentAccount(h); acc.Status != rent.StatusActive {
		t.Fatalf("after restore: %+v", acc)
	}
	_ = bobA
}

func evictedEvent(t *testing.T, rs []*types.Receipt) *rent.EvictedEvent {
	t.Helper()
	for _, r := range rs {
		for _, ev := range r.Events {
			if ev.Emitter == types.RentModuleAddress && ev.Topic == rent.TopicActorEvicted {
				var e rent.EvictedEvent
				if err := codec.Unmarshal(ev.Data, &e); err != nil {
					t.Fatal(err)
				}
				return &e
			}
		}
	}
	t.Fatal("no ActorEvicted event")
	return nil
}

// TestStorageBondQuota: the actor host's quota comes from the rent module,
// a bond raises it, shrinking returns the bond, and the quota cannot go
// below the storage in use.
func TestStorageBondQuota(t *testing.T) {
	alice, _ := genKey()
	p := testRent
	p.BaseQuota, p.MaxQuota, p.FreeBytes = 16<<10, 64<<10, 1<<10
	c := stateRentChain(t, p, alice)
	aliceA := types.PubkeyToAddress(alice.PublicKey)
	rentAddr := types.RentModuleAddress
	rs := c.step(c.tx(alice, nil, deployIn(hoard, "q"), 0))
	h := *rs[0].Created
	fill := func() *types.Receipt {
		return c.step(c.tx(alice, &h, &types.Call{Handler: "fill", Args: cborArgs([]any{24, 1000})}, 0))[0]
	}
	if r := fill(); r.Status == types.ReceiptSuccess || !bytes.Contains([]byte(r.Error), []byte("quota")) {
		t.Fatalf("24 KB into a 16 KiB quota: %v %s", r.Status, r.Error)
	}
	start := balanceOf(t, c, aliceA)
	c.step(c.tx(alice, &rentAddr, &types.StorageBond{Actor: h, Quota: 32 << 10}, 0))
	want := big.NewInt((32<<10 - 16<<10) * 1000)
	if got := balanceOf(t, c, rentAddr); got.Cmp(want) != 0 {
		t.Fatalf("bond held %s, want %s", got, want)
	}
	if r := fill(); r.Status != types.ReceiptSuccess {
		t.Fatalf("24 KB into a bonded 32 KiB quota: %s", r.Error)
	}
	c.rejected(c.tx(alice, &rentAddr, &types.StorageBond{Actor: h, Quota: 16 << 10}, 0), system.CodeBadQuota)
	c.step(c.tx(alice, &rentAddr, &types.StorageBond{Actor: h, Quota: 28 << 10}, 0))
	want = big.NewInt((28<<10 - 16<<10) * 1000)
	if got := balanceOf(t, c, rentAddr); got.Cmp(want) != 0 {
		t.Fatalf("bond held %s after shrinking, want %s", got, want)
	}
	// Alice paid the bond's net 12 KiB (plus fees); the 4 KiB returned came back.
	spent := new(big.Int).Sub(start, balanceOf(t, c, aliceA))
	if spent.Cmp(want) < 0 {
		t.Fatalf("alice spent %s, less than the bond %s", spent, want)
	}
	if acc := c.rentAccount(h); acc.Quota != 28<<10 || acc.Bond.Cmp(want) != 0 {
		t.Fatalf("rent account %+v", acc)
	}
}

// TestRentOffWritesNothing: without "rent" in genesis the module keeps no
// state and its instructions fail with RentOff.
func TestRentOffWritesNothing(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rentAddr := types.RentModuleAddress
	rs := c.step(c.tx(alice, nil, deployIn(hoard, "off"), 0))
	h := *rs[0].Created
	c.step(c.tx(alice, &h, &types.Call{Handler: "fill", Args: cborArgs([]any{20, 1000})}, 0))
	c.rejected(c.tx(alice, &rentAddr, &types.RentPay{Actor: h}, 1000), system.CodeRentOff)
	c.view(func(v *store.View) {
		n := 0
		v.Scan(rent.Key(), func(_, _ []byte) error { n++; return nil })
		if n != 0 {
			t.Fatalf("rent off wrote %d rent keys", n)
		}
	})
}

// TestRentSweepBounded: the sweep visits at most SweepPerBlock actors per
// block (its receipt names at most that many), and an actor touched by a
// transaction is assessed in that transaction (lazy assessment).
func TestRentSweepBounded(t *testing.T) {
	alice, _ := genKey()
	p := testRent
	p.SweepPerBlock = 1
	c := stateRentChain(t, p, alice)
	rentAddr := types.RentModuleAddress
	var hs []types.Address
	for i := 0; i < 3; i++ {
		rs := c.step(c.tx(alice, nil, deployIn(hoard, fmt.Sprint("s", i)), 0))
		h := *rs[0].Created
		c.step(c.tx(alice, &h, &types.Call{Handler: "fill", Args: cborArgs([]any{20, 1000})}, 0))
		c.step(c.txValue(alice, &rentAddr, &types.RentPay{Actor: h}, cby(1)))
		hs = append(hs, h)
	}
	for c.head().Height%rentEpoch != rentEpoch-1 {
		c.step()
	}
	// The next block opens an epoch: a call assesses its actor before the sweep.
	rs := c.step(c.tx(alice, &hs[2], &types.Call{Handler: "bump"}, 0))
	if rs[0].Status != types.ReceiptSuccess || rentEvents(rs[:1], rent.TopicRentCharged) != 1 {
		t.Fatalf("the touched actor was not assessed in its transaction: %s, %d RentCharged", rs[0].Error, rentEvents(rs[:1], rent.TopicRentCharged))
	}
	sweeps := 0
	for i := 0; i < 4*rentEpoch; i++ {
		rs := c.step()
		for _, r := range rs {
			if r.TxHash != rent.SweepReceiptHash(c.head().Height) {
				continue
			}
			seen := map[string]bool{}
			for _, ev := range r.Events {
				if ev.Topic != rent.TopicRentCharged {
					continue
				}
				var e rent.ChargedEvent
				if err := codec.Unmarshal(ev.Data, &e); err != nil {
					t.Fatal(err)
				}
				seen[e.Actor.String()] = true
			}
			if len(seen) > 1 {
				t.Fatalf("block %d: the sweep assessed %d actors, SweepPerBlock is 1", c.head().Height, len(seen))
			}
			sweeps += len(seen)
		}
	}
	if sweeps < 3*3 { // 3 actors charged in each of at least 3 epochs
		t.Fatalf("the sweep charged %d times in 4 epochs of 3 actors", sweeps)
	}
	// Every actor is settled through the current epoch or the one before
	// (a visit per 3 blocks), and none owes anything.
	now := c.head().Height / rentEpoch
	for _, h := range hs {
		acc := c.rentAccount(h)
		if acc.Charged+1 < now || acc.Debt.Sign() != 0 || acc.Status != rent.StatusActive {
			t.Fatalf("actor %s at epoch %d: %+v", h, now, acc)
		}
	}
}

// TestRentTargetFromParameterStore: T of the rate rule is the governed
// parameter rent.target_state_bytes (here its genesis value), not the rent
// object's default.
func TestRentTargetFromParameterStore(t *testing.T) {
	alice, _ := genKey()
	c := newChainWithGenesisKey(t, alice)
	cfg := c.ex.Config()
	p := testRent
	cfg.Rent = &p
	cfg.Governance.Genesis = map[string]uint64{rent.KeyTargetBytes: 1_000}
	ex, err := execution.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	rs := c.step(c.tx(alice, nil, deployIn(hoard, "t"), 0))
	h := *rs[0].Created
	c.step(c.tx(alice, &h, &types.Call{Handler: "fill", Args: cborArgs([]any{20, 1000})}, 0))
	global := func() *rent.Global {
		var g *rent.Global
		c.view(func(v *store.View) { g, _ = rent.ReadGlobal(v) })
		return g
	}
	g0 := global()
	for c.head().Height/rentEpoch == g0.Epoch {
		c.step()
	}
	// S ≈ 20 KB is far above T = 1,000 bytes: the rate rises by δ = 1/8
	// (with the default T = 60,000 it would fall).
	want := rent.Next(g0.Rate, g0.TotalBytes, 1_000)
	if got := global().Rate; got.Cmp(want) != 0 || got.Cmp(g0.Rate) <= 0 {
		t.Fatalf("rate %s → %s, want %s", g0.Rate, got, want)
	}
}
