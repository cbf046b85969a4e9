package execution_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/timers/timerlane"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// txLimits is a signed transaction with the given cycles limit and tip.
func (c *chain) txLimits(key *ecdsa.PrivateKey, to *types.Address, in types.Instruction, cycles, tip uint64) *types.Tx {
	c.t.Helper()
	payload, value := types.Bytes{}, big.NewInt(1) // a transfer moves 1 base unit
	if in != nil {
		value = new(big.Int)
		b, err := types.EncodeInstruction(in)
		if err != nil {
			c.t.Fatal(err)
		}
		payload = b
	}
	from := types.PubkeyToAddress(key.PublicKey)
	tx, err := types.NewTx(types.TxData{ChainID: c.g.ChainID, Nonce: c.nonce[from], To: to, Value: value,
		CyclesLimit: cycles, CellsLimit: 10_000, MaxFeePerCycle: 4e9, MaxFeePerCell: 4e9, TipPerCycle: tip, Payload: payload})
	if err != nil {
		c.t.Fatal(err)
	}
	c.nonce[from]++
	s, err := types.SignTx(tx, key)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

func (c *chain) env() execution.BlockEnv {
	h := c.head()
	return execution.BlockEnv{Height: h.Height + 1, Timestamp: h.Height + 1, Proposer: c.g.Proposer(), Seed: seedOf(h)}
}

// apply runs txs on c in mode and returns the result (nil and the error if
// the block is refused); nothing is committed.
func (c *chain) apply(txs []*types.Tx, mode execution.Mode) (*execution.Result, error) {
	var res *execution.Result
	env := c.env()
	err := c.st.View(func(v *store.View) (err error) {
		res, err = c.ex.Apply(context.Background(), v, env, txs, mode)
		return err
	})
	return res, err
}

// commit commits a result's writes as the next block carrying res.Included.
func (c *chain) commit(res *execution.Result) *types.Header {
	c.t.Helper()
	head, env := c.head(), c.env()
	blk, err := c.st.Commit(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return res.Block(c.g.ChainID, head, env, root), res.Receipts, nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return &blk.Header
}

// produce builds a block from candidates on the proposer chain p (Build
// mode), commits it, and has every validator chain replay its transactions
// in Verify mode: each must reach the same state root and receipts.
func produce(t *testing.T, p *chain, validators []*chain, cands ...*types.Tx) *execution.Result {
	t.Helper()
	res, err := p.apply(cands, execution.Build)
	if err != nil {
		t.Fatal(err)
	}
	h := p.commit(res)
	for i, v := range validators {
		vr, err := v.apply(res.Included, execution.Verify)
		if err != nil {
			t.Fatalf("validator %d refuses block %d: %v", i, h.Height, err)
		}
		vh := v.commit(vr)
		if vh.StateRoot != h.StateRoot || vh.ReceiptsRoot != h.ReceiptsRoot || string(codec.MustMarshal(vr.Receipts)) != string(codec.MustMarshal(res.Receipts)) {
			t.Fatalf("block %d: validator %d disagrees (state %s vs %s)", h.Height, i, vh.StateRoot, h.StateRoot)
		}
	}
	return res
}

func fundedKeys(n int) []*ecdsa.PrivateKey {
	out := make([]*ecdsa.PrivateKey, n)
	for i := range out {
		out[i], _ = genKey()
	}
	return out
}

func sumLimits(txs []*types.Tx) uint64 {
	var s uint64
	for _, tx := range txs {
		s += tx.CyclesLimit()
	}
	return s
}

// TestVerifyRejectsLaneViolations: a block in any order but the canonical
// seed order, or reserving more than the block, is refused with a clear
// error; the canonical one is accepted.
func TestVerifyRejectsLaneViolations(t *testing.T) {
	ks := fundedKeys(5)
	c := newChain(t, ks...)
	to := types.Address{0xbe, 0xef}
	var txs []*types.Tx
	for _, k := range ks[:3] {
		txs = append(txs, c.txLimits(k, &to, nil, 100_000, 1))
	}
	canon, err := execution.CanonicalOrder(txs, seedOf(c.head()))
	if err != nil {
		t.Fatal(err)
	}
	bad := []*types.Tx{canon[1], canon[0], canon[2]}
	if _, err := c.apply(bad, execution.Verify); !errors.Is(err, execution.ErrLaneOrder) {
		t.Fatalf("swapped block: %v", err)
	}
	// A sender's nonces stay in order whatever the seed.
	a2 := c.txLimits(ks[0], &to, nil, 100_000, 1)
	canon2, _ := execution.CanonicalOrder(append([]*types.Tx{a2}, txs...), seedOf(c.head()))
	pos := map[*types.Tx]int{}
	for i, tx := range canon2 {
		pos[tx] = i
	}
	if pos[txs[0]] > pos[a2] {
		t.Fatal("canonical order put nonce 1 before nonce 0")
	}
	if _, err := c.apply(canon2, execution.Verify); err != nil {
		t.Fatalf("canonical block refused: %v", err)
	}

	// Five 5M-cycle transactions reserve 25M of a 20M block.
	for _, k := range ks {
		c.nonce[types.PubkeyToAddress(k.PublicKey)] = 0
	}
	var big []*types.Tx
	for _, k := range ks {
		big = append(big, c.txLimits(k, &to, nil, 5_000_000, 1))
	}
	big, _ = execution.CanonicalOrder(big, seedOf(c.head()))
	if _, err := c.apply(big, execution.Verify); !errors.Is(err, execution.ErrLaneBudget) {
		t.Fatalf("over-full block: %v", err)
	}
	// The proposer's side never builds such a block.
	res, err := c.apply(big, execution.Build)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Included) != 4 || len(res.Deferred) != 1 || sumLimits(res.Included) > 20_000_000 {
		t.Fatalf("built %d, deferred %d", len(res.Included), len(res.Deferred))
	}
}

// TestBuildReservesRunnerLaneAndAgrees: user transactions paying more
// cannot take the runner lane's reservation, unused reservations spill to
// users, and a validator replaying the built blocks in Verify mode agrees
// on every root and receipt.
func TestBuildReservesRunnerLaneAndAgrees(t *testing.T) {
	ks := fundedKeys(7)
	var p, v *chain
	{
		faucet, _ := genKey()
		p = newChainFrom(t, faucet, ks...)
		v = newChainFrom(t, faucet, ks...)
		v.nonce = p.nonce
	}
	if p.head().StateRoot != v.head().StateRoot {
		t.Fatal("genesis differs")
	}
	to := types.Address{0xbe, 0xef}
	reg := types.RunnerRegistryAddress
	var users []*types.Tx
	for i, k := range ks[:6] {
		users = append(users, p.txLimits(k, &to, nil, 4_000_000, 1_000+uint64(i)))
	}
	// A runner heartbeat from an unregistered key fails on its merits but
	// is a runner-lane transaction all the same; it bids the least.
	hb := p.txLimits(ks[6], &reg, &types.RunnerHeartbeat{}, 2_000_000, 0)
	if l := fees.LaneOf(hb, &types.RunnerHeartbeat{}); l != fees.LaneRunner {
		t.Fatalf("heartbeat in %s lane", l)
	}
	// Candidates come in the mempool's priority order: highest fee first.
	cands := []*types.Tx{hb}
	for i := len(users) - 1; i >= 0; i-- {
		cands = append(cands, users[i])
	}
	res := produce(t, p, []*chain{v}, cands...)
	in := map[types.Hash]bool{}
	for _, tx := range res.Included {
		in[tx.Hash()] = true
	}
	// 2M runner + 4 x 4M users = 18M; a fifth user (22M) does not fit.
	if !in[hb.Hash()] || len(res.Included) != 5 || len(res.Deferred) != 2 {
		t.Fatalf("included %d (runner %v), deferred %d", len(res.Included), in[hb.Hash()], len(res.Deferred))
	}
	for _, u := range users[:2] {
		if in[u.Hash()] {
			t.Fatal("a lower-paying user got in ahead of a higher one")
		}
	}
	want, _ := execution.CanonicalOrder(res.Included, seedOf(p.header(p.head().Height-1)))
	for i := range want {
		if want[i] != res.Included[i] {
			t.Fatal("built block is not in canonical order")
		}
	}
	// Next block: only the deferred users, no runner traffic: they may use
	// the reserved lanes' unused capacity (5 x 4M = 20M fits exactly).
	var more []*types.Tx
	more = append(more, res.Deferred...)
	for _, k := range ks[2:5] {
		more = append(more, p.txLimits(k, &to, nil, 4_000_000, 1))
	}
	res = produce(t, p, []*chain{v}, more...)
	if len(res.Included) != 5 || sumLimits(res.Included) != 20_000_000 {
		t.Fatalf("spill: included %d (%d cycles)", len(res.Included), sumLimits(res.Included))
	}
}

// TestLaneMultiplierCharges: a lane's multiplier scales what its
// transactions pay and what they must be able to pay.
func TestLaneMultiplierCharges(t *testing.T) {
	k, _ := genKey()
	c := newChain(t, k)
	lanes := fees.DefaultLanes()
	lanes.Multiplier[fees.LaneUser] = 15_000 // 1.5x
	ex, err := execution.New(execution.Config{ChainID: c.g.ChainID, Fees: c.g.Fees, VM: sharedEngine(t), Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	to := types.Address{0xbe, 0xef}
	res, err := c.apply([]*types.Tx{c.txLimits(k, &to, nil, fees.TransferCycles, 0)}, execution.Verify)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Receipts[0]
	want := new(big.Int).SetUint64(r.CyclesUsed * (res.Basefees.Cycle * 3 / 2))
	want.Add(want, new(big.Int).SetUint64(r.CellsUsed*(res.Basefees.Cell*3/2)))
	if r.Burned.Cmp(want) != 0 {
		t.Fatalf("burned %s, want %s at 1.5x", r.Burned, want)
	}
	// A fee cap between 1x and 1.5x the basefee is not enough in this lane.
	lanes.Multiplier[fees.LaneUser] = 50_000 // 5x: 5e9 > the 4e9 cap
	ex, _ = execution.New(execution.Config{ChainID: c.g.ChainID, Fees: c.g.Fees, VM: sharedEngine(t), Lanes: lanes})
	c.ex = ex
	if _, err := c.apply([]*types.Tx{c.txLimits(k, &to, nil, fees.TransferCycles, 0)}, execution.Verify); !errors.Is(err, types.ErrFeeCapTooLow) {
		t.Fatalf("fee cap below the lane basefee: %v", err)
	}
}

const floodActor = `from cowboy_sdk import actor, runtime

@actor
class Flood:
    def __init__(self):
        self.storage["n"] = 0

    def flood(self, height, gbas, per):
        for g in gbas:
            for i in range(per):
                runtime.set_timer(height, "ping", None, g)

    def ping(self):
        pass

    def late(self, height):
        self.storage["late"] = runtime.set_timer(height, "ping")
`

const tipGBA = `from cowboy_sdk import actor

@actor
class Tip:
    def __init__(self, tip):
        self.storage["tip"] = tip

    def get_gas_bid(self, ctx):
        tip = self.storage["tip"]
        return [480000, 2000, ctx["basefee_cycle"] * 2 + tip, ctx["basefee_cell"] * 2, tip, 0]
`

// TestTimerLaneUnderSaturation runs a saturated timer lane and a saturated
// user lane through the real executor with lanes on: a proposer builds
// every block, a validator replays it in Verify mode and must agree.
// Each block brings 6 timers bidding tips of 300 / 200 / 100 per cycle
// (480,000-cycle bids: 4 fit in the 2,000,000-cycle lane, and the 80,000
// left cannot hold a default bid) plus eight users reserving 2.5M cycles
// each. Checked: the timer lane keeps its claim
// whatever the users bid; users get exactly the rest; timers fire in bid
// order; a timer on the network default bid (no tip, deferred every block)
// fires within a bounded number of blocks while the flood goes on; the
// backlog drains once it stops.
func TestTimerLaneUnderSaturation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~40 blocks through the PVM")
	}
	alice, _ := crypto.HexToECDSA("8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63")
	users := make([]*ecdsa.PrivateKey, 8)
	for i := range users {
		users[i], _ = genKey()
	}
	funded := append([]*ecdsa.PrivateKey{alice}, users...)
	p := newChainWithGenesisKey(t, funded...)
	v := newChainWithGenesisKey(t, funded...)
	v.nonce = p.nonce
	vs := []*chain{v}
	owner := types.PubkeyToAddress(alice.PublicKey)
	produce(t, p, vs, p.txValue(alice, nil, &types.Deploy{Code: types.Bytes(floodActor), Salt: types.Bytes("f"), Requires: testRequires}, cby(200)))
	tips := []int{300, 200, 100}
	var gbas []types.Address
	var deploys []*types.Tx
	for _, tip := range tips {
		salt := []byte{byte(tip / 1000)}
		deploys = append(deploys, p.tx(alice, nil, &types.Deploy{Code: types.Bytes(tipGBA), Salt: salt, InitArgs: cborArgs([]any{tip})}, 0))
		gbas = append(gbas, types.ActorAddress(owner, salt, types.CodeHash([]byte(tipGBA))))
	}
	produce(t, p, vs, deploys...)
	flood := types.ActorAddress(owner, []byte("f"), types.CodeHash([]byte(floodActor)))
	tipOf := map[types.Address]uint64{}
	for i, g := range gbas {
		tipOf[g] = uint64(tips[i])
	}
	gbaArgs := []any{gbas[0][:], gbas[1][:], gbas[2][:]}
	to := types.Address{0xbe, 0xef}

	start := p.head().Height + 1
	const floodBlocks = 14
	const floodCycles = 1_500_000
	lowAt := start + 3
	var lowID types.Hash
	lowFired := uint64(0)
	gbaOfTimer := map[types.Hash]types.Address{}
	for b := uint64(0); ; b++ {
		h := p.head().Height + 1
		var cands []*types.Tx
		if b < floodBlocks {
			cands = append(cands, p.txLimits(alice, &flood, &types.Call{Handler: "flood", Args: cborArgs([]any{h + 1, gbaArgs, 2})}, floodCycles, 10))
			for _, u := range users {
				cands = append(cands, p.txLimits(u, &to, nil, 2_500_000, 5_000))
			}
		}
		if h == start {
			cands = append(cands, p.txLimits(alice, &flood, &types.Call{Handler: "late", Args: cborArgs([]any{lowAt})}, 1_000_000, 10))
		}
		res := produce(t, p, vs, cands...)
		for _, r := range res.Receipts[:len(res.Included)] {
			if r.Status != types.ReceiptSuccess {
				t.Fatalf("height %d: tx failed: %s", h, r.Error)
			}
		}
		// Which GBA each scheduled timer named: read the records.
		if err := p.st.View(func(sv *store.View) error {
			for _, ev := range timerEvents(res.Receipts, timerlane.TopicTimerScheduled) {
				tm, err := p.ex.Timers().Get(state.NewOverlay(sv), ev.ID)
				if err != nil {
					return err
				}
				if tm.GBA != nil {
					gbaOfTimer[ev.ID] = *tm.GBA
				} else if ev.Target == lowAt {
					lowID = ev.ID
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fired := timerEvents(res.Receipts, timerlane.TopicTimerFired)
		claim := uint64(0)
		for _, f := range fired {
			if _, ok := gbaOfTimer[f.ID]; ok {
				claim += 480_000
			} else {
				claim += timers.DefaultParams().DefaultCyclesLimit
			}
		}
		if claim > p.ex.TimerLaneBudget() {
			t.Fatalf("height %d: timer lane claimed %d > %d", h, claim, p.ex.TimerLaneBudget())
		}
		if b < floodBlocks && b > 0 {
			if len(fired) < 4 {
				t.Fatalf("height %d: only %d timers fired in a saturated lane", h, len(fired))
			}
			// Users get exactly what the timer lane left: 2.5M each.
			users := 0
			for _, tx := range res.Included {
				if to, ok := tx.To(); ok && to == (types.Address{0xbe, 0xef}) {
					users++
				}
			}
			if need := sumLimits(res.Included); need+claim > 20_000_000 {
				t.Fatalf("height %d: transactions %d + timers %d exceed the block", h, need, claim)
			}
			if want := min(8, (20_000_000-claim-floodCycles)/2_500_000); uint64(users) != want {
				t.Fatalf("height %d: %d users included, want %d (timers claimed %d)", h, users, want, claim)
			}
		}
		if b == 1 {
			// No deferrals yet at this height: bid order.
			prev := uint64(1 << 62)
			for _, f := range fired {
				tip := tipOf[gbaOfTimer[f.ID]]
				if tip > prev {
					t.Fatalf("height %d: fired out of bid order (%d after %d)", h, tip, prev)
				}
				prev = tip
			}
		}
		for _, f := range fired {
			if f.ID == lowID {
				lowFired = h
				if f.Deferrals == 0 {
					t.Fatal("the default bid fired without waiting in a saturated lane")
				}
			}
		}
		if b >= floodBlocks {
			if err := p.st.View(func(sv *store.View) error {
				st, err := p.ex.Timers().Stats(state.NewOverlay(sv))
				if err != nil {
					return err
				}
				if st.Depth() == 0 {
					b = 1 << 40
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if b == 1<<40 {
				break
			}
			if b > floodBlocks+20 {
				t.Fatal("backlog did not drain")
			}
		}
	}
	if lowID == (types.Hash{}) || lowFired == 0 {
		t.Fatalf("default-bid timer %s starved", lowID)
	}
	// ceiling 300 < 2^9: at most 9 deferrals, plus the timers deferred
	// longer than it.
	if lowFired-lowAt > 11 || lowFired >= start+floodBlocks {
		t.Fatalf("default-bid timer due at %d fired at %d", lowAt, lowFired)
	}
	auditSupply(t, p)
}

// TestBuildStopsSenderAtInvalidTx: a transaction that fails the stateless
// checks is rejected; its sender's earlier transactions still go in, its
// later ones wait (they would leave a nonce gap).
func TestBuildStopsSenderAtInvalidTx(t *testing.T) {
	k, _ := genKey()
	c := newChain(t, k)
	to := types.Address{0xbe, 0xef}
	ok0 := c.txLimits(k, &to, nil, 100_000, 1)
	bad := c.txLimits(k, &to, nil, c.g.Fees.MaxTxCycles+1, 1) // above the per-tx maximum
	ok2 := c.txLimits(k, &to, nil, 100_000, 1)
	res, err := c.apply([]*types.Tx{ok0, bad, ok2}, execution.Build)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Included) != 1 || res.Included[0] != ok0 || len(res.Rejected) != 1 || res.Rejected[0].Tx != bad ||
		len(res.Deferred) != 1 || res.Deferred[0] != ok2 {
		t.Fatalf("included %d, rejected %d, deferred %d", len(res.Included), len(res.Rejected), len(res.Deferred))
	}
}

// TestCanonicalOrderProperties checks, over random sets: the order is a
// permutation keeping every sender's nonces ascending; it does not depend
// on the input order; and dropping the tail of one sender's queue leaves
// everything else in the same relative order (why a built block whose
// execution rejected some transactions is still canonical).
func TestCanonicalOrderProperties(t *testing.T) {
	r := mrand.New(mrand.NewPCG(7, 9))
	ks := fundedKeys(6)
	to := types.Address{0xbe, 0xef}
	for round := 0; round < 40; round++ {
		var txs []*types.Tx
		for i, k := range ks {
			for n := uint64(0); n < r.Uint64N(5); n++ {
				tx, _ := types.NewTx(types.TxData{ChainID: 1, Nonce: n, To: &to, Value: big.NewInt(int64(i)), CyclesLimit: 1})
				s, err := types.SignTx(tx, k)
				if err != nil {
					t.Fatal(err)
				}
				txs = append(txs, s)
			}
		}
		seed := types.Keccak256([]byte{byte(round)})
		got, err := execution.CanonicalOrder(txs, seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(txs) {
			t.Fatalf("round %d: %d of %d", round, len(got), len(txs))
		}
		next := map[types.Address]uint64{}
		for _, tx := range got {
			from, _ := tx.Sender()
			if tx.Nonce() != next[from] {
				t.Fatalf("round %d: nonce %d of %s out of order", round, tx.Nonce(), from)
			}
			next[from]++
		}
		shuffled := slices.Clone(txs)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, _ := execution.CanonicalOrder(shuffled, seed)
		for i := range got {
			if got[i] != again[i] {
				t.Fatalf("round %d: order depends on the input order", round)
			}
		}
		if len(got) == 0 {
			continue
		}
		// Drop one sender's transactions from a random nonce on.
		victim, _ := got[r.IntN(len(got))].Sender()
		cut := r.Uint64N(next[victim])
		var kept []*types.Tx
		for _, tx := range got {
			if from, _ := tx.Sender(); from != victim || tx.Nonce() < cut {
				kept = append(kept, tx)
			}
		}
		sub, _ := execution.CanonicalOrder(kept, seed)
		for i := range kept {
			if sub[i] != kept[i] {
				t.Fatalf("round %d: dropping a sender's tail reordered the rest", round)
			}
		}
	}
}

// TestOrderedModeRunsSeedOrder: a payload whose order consensus fixed
// (execute-on-finality) still runs in the canonical seed order, so any
// permutation of the same payload gives the same block; what does not fit
// is skipped, not an error.
func TestOrderedModeRunsSeedOrder(t *testing.T) {
	ks := fundedKeys(5)
	faucet, _ := genKey()
	a := newChainFrom(t, faucet, ks...)
	b := newChainFrom(t, faucet, ks...)
	b.nonce = a.nonce
	to := types.Address{0xbe, 0xef}
	var txs []*types.Tx
	for _, k := range ks {
		txs = append(txs, a.txLimits(k, &to, nil, 5_000_000, 1)) // 25M: one does not fit
	}
	rev := slices.Clone(txs)
	slices.Reverse(rev)
	ra, err := a.apply(txs, execution.Ordered)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.apply(rev, execution.Ordered)
	if err != nil {
		t.Fatal(err)
	}
	if len(ra.Included) != 4 || len(ra.Deferred) != 1 || len(rb.Included) != 4 {
		t.Fatalf("included %d / %d, deferred %d", len(ra.Included), len(rb.Included), len(ra.Deferred))
	}
	want, _ := execution.CanonicalOrder(ra.Included, seedOf(a.head()))
	for i := range want {
		if ra.Included[i] != want[i] {
			t.Fatal("ordered payload not run in seed order")
		}
	}
	// Different payload orders defer different transactions (the payload
	// order is the fitting priority); with room for all, they agree.
	ra, _ = a.apply(txs[:4], execution.Ordered)
	rb, _ = b.apply(rev[1:], execution.Ordered)
	ha, hb := a.commit(ra), b.commit(rb)
	if ha.StateRoot != hb.StateRoot || ha.ReceiptsRoot != hb.ReceiptsRoot {
		t.Fatal("two orders of one payload gave different blocks")
	}
}
