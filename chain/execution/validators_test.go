package execution_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// vchain drives a chain with a Validator Registry block by block, with
// one-second timestamps and an explicit QC signer bitmap per block.
type vchain struct{ *chain }

func blsKey(t *testing.T, b byte) *bls.SecretKey {
	seed := make([]byte, 32)
	seed[0] = b
	k, err := bls.KeyFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newVChain(t *testing.T, vals []*bls.SecretKey, funded ...*ecdsa.PrivateKey) (*vchain, []*ecdsa.PrivateKey) {
	faucet, _ := genKey()
	var gv []genesis.Validator
	var keys []*ecdsa.PrivateKey
	for _, k := range vals {
		ak, _ := genKey()
		keys = append(keys, ak)
		a := types.PubkeyToAddress(ak.PublicKey)
		gv = append(gv, genesis.Validator{Address: a, Stake: 10_000, BLSKey: k.PublicKey().Bytes(), BLSPoP: k.ProvePossession().Bytes()})
	}
	g := genesis.Testnet(0, gv, types.PubkeyToAddress(faucet.PublicKey), genesis.Consensus{
		EpochLength: 10, UnbondingMs: 5_000, JailMs: 2_000, DowntimeWindow: 10, MinStakeCBY: 10_000,
	})
	for _, k := range funded {
		g.Allocations[0].Balance.Sub(g.Allocations[0].Balance, genesis.CBY(50_000))
		g.Allocations = append(g.Allocations, genesis.Allocation{Address: types.PubkeyToAddress(k.PublicKey), Balance: genesis.CBY(50_000)})
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	if _, err := st.Commit(g.State(), func(root types.Hash) (*types.Block, []*types.Receipt, error) { return g.Block(root), nil, nil }); err != nil {
		t.Fatal(err)
	}
	ex, err := execution.New(execution.Config{ChainID: g.ChainID, Fees: g.Fees, Validators: g.ValidatorParams()})
	if err != nil {
		t.Fatal(err)
	}
	return &vchain{&chain{t: t, st: st, ex: ex, g: g, nonce: map[types.Address]uint64{}}}, keys
}

func (c *vchain) tx(key *ecdsa.PrivateKey, in types.Instruction, value *big.Int) *types.Tx {
	c.t.Helper()
	to := types.ValidatorRegistryAddress
	return c.txValue(key, &to, in, value)
}

// block executes txs at the next height; signers is the parent QC's bitmap
// (nil: everyone signed).
func (c *vchain) block(signers types.Bytes, txs ...*types.Tx) []*types.Receipt {
	c.t.Helper()
	var res *execution.Result
	var head *types.Header
	var env execution.BlockEnv
	if err := c.st.View(func(v *store.View) (err error) {
		head = v.Head()
		ep, err := execution.ReadEpoch(v)
		if err != nil {
			return err
		}
		if signers == nil {
			signers = make(types.Bytes, (len(ep.Members)+7)/8)
			for i := range ep.Members {
				signers[i/8] |= 1 << (i % 8)
			}
		}
		env = execution.BlockEnv{Height: head.Height + 1, Timestamp: 1000 * (head.Height + 1), Proposer: types.Address{0x7a, 1}, Seed: seedOf(head), Signers: signers}
		res, err = c.ex.Apply(context.Background(), v, env, txs, execution.Ordered)
		return err
	}); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.st.Commit(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return res.Block(c.g.ChainID, head, env, root), res.Receipts, nil
	}); err != nil {
		c.t.Fatal(err)
	}
	if len(res.Rejected) > 0 {
		c.t.Fatalf("rejected: %v", res.Rejected[0].Err)
	}
	// Receipts in the order of txs (execution may order them otherwise).
	byHash := map[types.Hash]*types.Receipt{}
	for _, r := range res.Receipts {
		byHash[r.TxHash] = r
	}
	out := make([]*types.Receipt, len(txs))
	for i, tx := range txs {
		out[i] = byHash[tx.Hash()]
	}
	return out
}

func (c *vchain) until(h uint64) {
	c.t.Helper()
	for {
		hd, _ := c.st.Head()
		if hd.Height >= h {
			return
		}
		c.block(nil)
	}
}

func (c *vchain) validator(a types.Address) *execution.ValidatorRecord {
	var r *execution.ValidatorRecord
	c.view(func(v *store.View) {
		var err error
		if r, err = execution.ReadValidator(v, a); err != nil {
			c.t.Fatal(err)
		}
	})
	return r
}

func (c *vchain) epoch() *execution.Epoch {
	var e *execution.Epoch
	c.view(func(v *store.View) {
		var err error
		if e, err = execution.ReadEpoch(v); err != nil || e == nil {
			c.t.Fatalf("epoch: %v", err)
		}
	})
	return e
}

func members(e *execution.Epoch) []types.Address {
	var out []types.Address
	for _, m := range e.Members {
		out = append(out, m.Address)
	}
	return out
}

func failedWith(t *testing.T, r *types.Receipt, want string) {
	t.Helper()
	if r.Status != types.ReceiptFailed || !strings.Contains(r.Error, want) {
		t.Fatalf("want failure %q, got status %d %q", want, r.Status, r.Error)
	}
}

func TestValidatorRegistry(t *testing.T) {
	ka, kb := blsKey(t, 1), blsKey(t, 2)
	carolKey, _ := genKey()
	carol := types.PubkeyToAddress(carolKey.PublicKey)
	c, vkeys := newVChain(t, []*bls.SecretKey{ka, kb}, carolKey)
	a, b := types.PubkeyToAddress(vkeys[0].PublicKey), types.PubkeyToAddress(vkeys[1].PublicKey)
	kc := blsKey(t, 3)

	// Registration: stake floor, proof of possession, key reuse.
	rs := c.block(nil,
		c.tx(carolKey, &types.ValidatorRegister{BLSKey: kc.PublicKey().Bytes(), BLSPoP: kc.ProvePossession().Bytes()}, genesis.CBY(5_000)),
		c.tx(carolKey, &types.ValidatorRegister{BLSKey: kc.PublicKey().Bytes(), BLSPoP: ka.ProvePossession().Bytes()}, genesis.CBY(15_000)),
		c.tx(carolKey, &types.ValidatorRegister{BLSKey: ka.PublicKey().Bytes(), BLSPoP: ka.ProvePossession().Bytes()}, genesis.CBY(15_000)),
		c.tx(carolKey, &types.ValidatorRegister{BLSKey: kc.PublicKey().Bytes(), BLSPoP: kc.ProvePossession().Bytes()}, genesis.CBY(15_000)),
	)
	failedWith(t, rs[0], "InsufficientStake")
	failedWith(t, rs[1], "InvalidProofOfPossession")
	failedWith(t, rs[2], "BLSKeyInUse")
	if rs[3].Status != types.ReceiptSuccess {
		t.Fatalf("register: %s", rs[3].Error)
	}
	if r := c.validator(carol); r == nil || r.Status != execution.ValidatorPending || r.Stake.Cmp(genesis.CBY(15_000)) != 0 {
		t.Fatalf("carol %+v", r)
	}
	// Activation waits for the epoch boundary (height 10).
	c.until(9)
	if e := c.epoch(); e.Number != 0 || len(e.Members) != 2 {
		t.Fatalf("epoch before the boundary: %+v", e)
	}
	c.until(10)
	e1 := c.epoch()
	if e1.Number != 1 || e1.StartHeight != 11 || len(e1.Members) != 3 || e1.Seed == (types.Hash{}) {
		t.Fatalf("epoch 1: %+v", e1)
	}
	for i := 1; i < len(e1.Members); i++ {
		if string(e1.Members[i-1].Address[:]) >= string(e1.Members[i].Address[:]) {
			t.Fatalf("members not sorted: %v", members(e1))
		}
	}
	if r := c.validator(carol); r.Status != execution.ValidatorActive {
		t.Fatalf("carol after the boundary: %+v", r)
	}

	// Rewards: minted by stake, accounted in the supply audit.
	var minted, balA, balCarol *big.Int
	c.view(func(v *store.View) {
		s, _ := node.AuditSupply(v)
		minted = s.Minted
	})
	if minted.Sign() <= 0 {
		t.Fatal("no inflation minted")
	}
	bal := func(x types.Address) *big.Int {
		var out *big.Int
		c.view(func(v *store.View) {
			acc, err := state.ReadAccount(v, x)
			if err != nil {
				t.Fatal(err)
			}
			out = acc.Balance
		})
		return out
	}
	balA, balCarol = bal(a), bal(carol)
	c.block(nil)
	gainA := new(big.Int).Sub(bal(a), balA)
	gainCarol := new(big.Int).Sub(bal(carol), balCarol)
	// Carol stakes 15,000 against a's 10,000: 1.5× the reward.
	if gainA.Sign() <= 0 || new(big.Int).Mul(gainA, big.NewInt(3)).Cmp(new(big.Int).Mul(gainCarol, big.NewInt(2))) != 0 {
		t.Fatalf("rewards: a +%s, carol +%s", gainA, gainCarol)
	}

	// Downtime: b misses every vote of the window ending at height 20.
	idxB := -1
	for i, m := range e1.Members {
		if m.Address == b {
			idxB = i
		}
	}
	for h := c.height() + 1; h <= 20; h++ {
		bm := types.Bytes{0}
		for i := range e1.Members {
			if i != idxB {
				bm[0] |= 1 << i
			}
		}
		c.block(bm)
	}
	if r := c.validator(b); !r.Jailed || r.Missed != 0 {
		t.Fatalf("b after missing the window: %+v", r)
	}
	e2 := c.epoch()
	if e2.Number != 2 || len(e2.Members) != 2 || contains(members(e2), b) {
		t.Fatalf("epoch 2 still has the jailed validator: %v", members(e2))
	}
	// Unjail after the jail period; b is back at the next boundary.
	rs = c.block(nil, c.tx(carolKey, &types.ValidatorUnjail{}, new(big.Int)))
	failedWith(t, rs[0], "NotJailed")

	// Equivocation evidence: two votes of a in one round.
	vote := func(k *bls.SecretKey, h types.Hash) consensus.SignedHeader {
		return consensus.SignedHeader{BlockHash: h, Height: 30, Round: 40, Signature: k.Sign(consensus.VoteMessage(c.g.ChainID, h, 30, 40)).Bytes()}
	}
	ev := consensus.Evidence{Kind: consensus.DoubleVote, ChainID: c.g.ChainID, Validator: a, A: vote(ka, types.Hash{1}), B: vote(ka, types.Hash{2})}
	forged := consensus.Evidence{Kind: consensus.DoubleVote, ChainID: c.g.ChainID, Validator: a, A: vote(kc, types.Hash{1}), B: vote(kc, types.Hash{2})}
	stakeA := c.validator(a).Stake
	var burnedBefore *big.Int
	c.view(func(v *store.View) { s, _ := node.AuditSupply(v); burnedBefore = s.Burned })
	rs = c.block(nil,
		c.tx(carolKey, &types.ValidatorEvidence{Evidence: forged.Encode()}, new(big.Int)),
		c.tx(carolKey, &types.ValidatorEvidence{Evidence: ev.Encode()}, new(big.Int)),
		c.tx(carolKey, &types.ValidatorEvidence{Evidence: ev.Encode()}, new(big.Int)),
	)
	failedWith(t, rs[0], "InvalidEvidence")
	if rs[1].Status != types.ReceiptSuccess {
		t.Fatalf("evidence: %s", rs[1].Error)
	}
	failedWith(t, rs[2], "EvidenceKnown")
	ra := c.validator(a)
	wantStake := new(big.Int).Sub(stakeA, new(big.Int).Quo(stakeA, big.NewInt(100)))
	if !ra.Jailed || ra.Stake.Cmp(wantStake) != 0 {
		t.Fatalf("a after evidence: jailed %v stake %s want %s", ra.Jailed, ra.Stake, wantStake)
	}
	c.view(func(v *store.View) {
		s, _ := node.AuditSupply(v)
		if d := new(big.Int).Sub(s.Burned, burnedBefore); d.Cmp(new(big.Int).Quo(stakeA, big.NewInt(100))) < 0 {
			t.Fatalf("slash not burned: %s", d)
		}
	})

	// b served its jail (2 s since height 20) and unjails: with a jailed
	// by the evidence, epoch 3 has b and no longer carol (exiting below).
	rs = c.block(nil, c.tx(vkeys[1], &types.ValidatorUnjail{}, new(big.Int)), c.tx(vkeys[0], &types.ValidatorUnjail{}, new(big.Int)))
	if rs[0].Status != types.ReceiptSuccess {
		t.Fatalf("unjail: %s", rs[0].Error)
	}
	failedWith(t, rs[1], "StillJailed")

	// Exit and withdraw: carol leaves at the next boundary, the stake
	// unbonds for 5 s from the exit.
	c.until(24)
	c.block(nil, c.tx(carolKey, &types.ValidatorExit{}, new(big.Int)))
	exitAt := c.height()
	rs = c.block(nil, c.tx(carolKey, &types.ValidatorWithdraw{}, new(big.Int)))
	failedWith(t, rs[0], "StillBonded")
	c.until(30)
	e3 := c.epoch()
	if contains(members(e3), carol) {
		t.Fatalf("epoch 3 still has the exited validator: %v", members(e3))
	}
	if len(e3.Members) != 1 || e3.Members[0].Address != b {
		t.Fatalf("epoch 3: %v, want only b", members(e3))
	}
	if r := c.validator(carol); r.Status != execution.ValidatorExited || r.UnbondAt != 1000*exitAt+5_000 {
		t.Fatalf("carol after exit: %+v (exit at %d)", r, exitAt)
	}
	before := bal(carol)
	c.until(exitAt + 6)
	rs = c.block(nil, c.tx(carolKey, &types.ValidatorWithdraw{}, new(big.Int)))
	if rs[0].Status != types.ReceiptSuccess {
		t.Fatalf("withdraw: %s", rs[0].Error)
	}
	if got := new(big.Int).Sub(bal(carol), before); got.Cmp(genesis.CBY(14_000)) < 0 {
		t.Fatalf("withdraw returned %s", got)
	}
	if c.validator(carol) != nil {
		t.Fatal("record kept after withdraw")
	}
}

func contains(xs []types.Address, x types.Address) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (c *vchain) height() uint64 {
	h, err := c.st.Head()
	if err != nil {
		c.t.Fatal(err)
	}
	return h.Height
}
