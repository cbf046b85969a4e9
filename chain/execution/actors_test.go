package execution_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
	"github.com/ethereum/go-ethereum/crypto"
)

var (
	engineOnce sync.Once
	engine     *pvm.Engine
	engineErr  error
)

// sharedEngine starts one real CPython engine for the package's tests.
func sharedEngine(t *testing.T) *pvm.Engine {
	engineOnce.Do(func() { engine, engineErr = pvm.New(context.Background(), pvm.Config{}) })
	if engineErr != nil {
		t.Fatalf("start PVM: %v", engineErr)
	}
	return engine
}

// chain is a store + executor pair driven block by block.
type chain struct {
	t     *testing.T
	st    *store.Store
	ex    *execution.Executor
	g     *genesis.Genesis
	nonce map[types.Address]uint64
}

func newChain(t *testing.T, funded ...*ecdsa.PrivateKey) *chain {
	faucet, _ := genKey()
	return newChainFrom(t, faucet, funded...)
}

// newChainWithGenesisKey builds a chain whose genesis depends only on the
// given keys, so two such chains start from the same state root.
func newChainWithGenesisKey(t *testing.T, funded ...*ecdsa.PrivateKey) *chain {
	faucet, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	return newChainFrom(t, faucet, funded...)
}

func (c *chain) head() *types.Header {
	h, err := c.st.Head()
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

func newChainFrom(t *testing.T, faucet *ecdsa.PrivateKey, funded ...*ecdsa.PrivateKey) *chain {
	g := genesis.Dev(1, types.Address{0x0a, 0x11}, types.PubkeyToAddress(faucet.PublicKey))
	// Move 1,000 CBY from the faucet allocation to each funded key.
	for _, k := range funded {
		g.Allocations[0].Balance.Sub(g.Allocations[0].Balance, genesis.CBY(1000))
		g.Allocations = append(g.Allocations, genesis.Allocation{Address: types.PubkeyToAddress(k.PublicKey), Balance: genesis.CBY(1000)})
	}
	st := openStore(t)
	if _, err := st.Commit(g.State(), func(root types.Hash) (*types.Block, []*types.Receipt, error) { return g.Block(root), nil, nil }); err != nil {
		t.Fatal(err)
	}
	ex, err := execution.New(execution.Config{ChainID: g.ChainID, Fees: g.Fees, VM: sharedEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	return &chain{t: t, st: st, ex: ex, g: g, nonce: map[types.Address]uint64{}}
}

func (c *chain) tx(key *ecdsa.PrivateKey, to *types.Address, in types.Instruction, value int64) *types.Tx {
	c.t.Helper()
	return c.txValue(key, to, in, big.NewInt(value))
}

// txValue is tx with an arbitrary value.
func (c *chain) txValue(key *ecdsa.PrivateKey, to *types.Address, in types.Instruction, value *big.Int) *types.Tx {
	c.t.Helper()
	payload, err := types.EncodeInstruction(in)
	if err != nil {
		c.t.Fatal(err)
	}
	from := types.PubkeyToAddress(key.PublicKey)
	tx, err := types.NewTx(types.TxData{ChainID: c.g.ChainID, Nonce: c.nonce[from], To: to, Value: value,
		CyclesLimit: 5_000_000, CellsLimit: 200_000, MaxFeePerCycle: 2e9, MaxFeePerCell: 2e9, Payload: payload})
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

// block applies txs in one block (Verify mode: all must be valid) and
// returns their receipts, in the order of txs, then the timer receipts.
// The block carries txs in the canonical seed order, as a proposer builds it.
func (c *chain) block(txs ...*types.Tx) []*types.Receipt {
	c.t.Helper()
	var res *execution.Result
	var head *types.Header
	var ordered []*types.Tx
	var env execution.BlockEnv
	if err := c.st.View(func(v *store.View) (err error) {
		head = v.Head()
		if ordered, err = execution.CanonicalOrder(txs, seedOf(head)); err != nil {
			return err
		}
		env = execution.BlockEnv{Height: head.Height + 1, Timestamp: head.Height + 1, Proposer: c.g.Proposer(), Seed: seedOf(head)}
		res, err = c.ex.Apply(context.Background(), v, env, ordered, execution.Verify)
		return err
	}); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.st.Commit(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return res.Block(c.g.ChainID, head, env, root), res.Receipts, nil
	}); err != nil {
		c.t.Fatal(err)
	}
	checkCodes(c.t, res.Receipts)
	byHash := make(map[types.Hash]*types.Receipt, len(ordered))
	for _, r := range res.Receipts[:len(ordered)] {
		byHash[r.TxHash] = r
	}
	out := make([]*types.Receipt, 0, len(res.Receipts))
	for _, tx := range txs {
		out = append(out, byHash[tx.Hash()])
	}
	return append(out, res.Receipts[len(ordered):]...)
}

func (c *chain) ok(txs ...*types.Tx) []*types.Receipt {
	c.t.Helper()
	rs := c.block(txs...)
	for _, r := range rs {
		if r.Status != types.ReceiptSuccess {
			c.t.Fatalf("tx %s failed: %s", r.TxHash, r.Error)
		}
	}
	return rs
}

func (c *chain) query(actor types.Address, handler string, args any) any {
	c.t.Helper()
	var out []byte
	if err := c.st.View(func(v *store.View) (err error) {
		out, _, err = c.ex.Query(context.Background(), v, execution.BlockEnv{Height: v.Head().Height}, actor, types.Address{}, handler, cborArgs(args))
		return err
	}); err != nil {
		c.t.Fatalf("query %s: %v", handler, err)
	}
	var v any
	if err := codec.Unmarshal(out, &v); err != nil {
		c.t.Fatal(err)
	}
	return v
}

func cborArgs(args any) []byte {
	if args == nil {
		return nil
	}
	return codec.MustMarshal(args)
}

func deployIn(code, salt string) *types.Deploy {
	return &types.Deploy{Code: types.Bytes(code), Salt: types.Bytes(salt)}
}

const counterSDK = `from cowboy_sdk import actor

@actor
class Counter:
    def __init__(self):
        self.storage["count"] = 0

    def increment(self, by=1):
        self.storage["count"] += by
        return self.storage["count"]

    def get(self):
        return self.storage["count"]
`

func TestDeployCallQuery(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.tx(alice, nil, deployIn(counterSDK, "s1"), 0))
	addr := *rs[0].Created
	want := types.ActorAddress(types.PubkeyToAddress(alice.PublicKey), []byte("s1"), types.CodeHash([]byte(counterSDK)))
	if addr != want {
		t.Fatalf("actor at %s, want %s", addr, want)
	}
	rs = c.ok(c.tx(alice, &addr, &types.Call{Handler: "increment", Args: cborArgs([]any{5})}, 0),
		c.tx(alice, &addr, &types.Call{Handler: "increment"}, 0))
	var ret uint64
	codec.Unmarshal(rs[1].Return, &ret)
	if ret != 6 {
		t.Fatalf("increment returned %d", ret)
	}
	if got := c.query(addr, "get", nil); got != uint64(6) {
		t.Fatalf("query %v", got)
	}
	// A failing call reverts its effects but pays its fee.
	rs = c.block(c.tx(alice, &addr, &types.Call{Handler: "nope"}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "HandlerNotFound") || rs[0].FeePaid.Sign() <= 0 {
		t.Fatalf("bad handler: %+v", rs[0])
	}
	// Same deployer, salt and code: refused; the failed deploy leaves no trace.
	rs = c.block(c.tx(alice, nil, deployIn(counterSDK, "s1"), 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "ActorExists") {
		t.Fatalf("redeploy: %+v", rs[0])
	}
	// Forbidden code is refused at deploy with line and rule, atomically.
	rs = c.block(c.tx(alice, nil, deployIn("import os\nclass Actor:\n    pass\n", "s2"), 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "line 1") {
		t.Fatalf("forbidden import: %+v", rs[0])
	}
	bad := types.ActorAddress(types.PubkeyToAddress(alice.PublicKey), []byte("s2"), types.CodeHash([]byte("import os\nclass Actor:\n    pass\n")))
	c.st.View(func(v *store.View) error {
		acc, _ := state.ReadAccount(v, bad)
		if acc.CodeHash != nil {
			t.Fatal("failed deploy left an actor")
		}
		return nil
	})
}

func balanceOf(t *testing.T, c *chain, a types.Address) *big.Int {
	var b *big.Int
	c.st.View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, a)
		if err != nil {
			t.Fatal(err)
		}
		b = acc.Balance
		return nil
	})
	return b
}
