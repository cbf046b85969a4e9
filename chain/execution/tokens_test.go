package execution_test

import (
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/actors/sigops"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

const vaultActor = `from cowboy_sdk import actor, runtime, tokens, HostError
import cowboy_sdk.tokens as tk

@actor
class Vault:
    def __init__(self):
        self.storage["err"] = None

    def _try(self, f, *args):
        self.storage["err"] = None
        try:
            return f(*args)
        except HostError as e:
            self.storage["err"] = str(e)
            return None

    def create(self, cap, initial):
        tid = tokens.create("Vault Share", "VLT", 6, cap, initial)
        self.storage["token"] = tid
        return tid

    def pay(self, to, amount):
        return self._try(tokens.transfer, self.storage["token"], to, amount)

    def mint(self, to, amount):
        return self._try(tk.mint, self.storage["token"], to, amount)

    def burn(self, amount):
        return self._try(tokens.burn, self.storage["token"], amount)

    def pull(self, token, owner, amount):
        return self._try(tokens.transfer_from, token, owner, runtime.self_address(), amount)

    def approve(self, spender, amount):
        return tokens.approve(self.storage["token"], spender, amount)

    def bal(self, token, who):
        return tokens.balance_of(token, who)

    def info(self):
        return tokens.info(self.storage["token"])

    def check(self, scheme, key, msg, sig):
        return self._try(runtime.verify_signature, scheme, key, msg, sig)

    def check712(self, td, sig, addr, chain_id):
        return self._try(runtime.verify_eip712, td, sig, addr, chain_id)

    def get(self, k):
        return self.storage.get(k)
`

func tokenBalance(t *testing.T, c *chain, id types.Hash, a types.Address) *big.Int {
	t.Helper()
	var b *big.Int
	if err := c.st.View(func(v *store.View) (err error) {
		b, err = tokens.BalanceOf(v, id, a)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// CIP-20 from both sides: an EOA creates and moves a token by transaction,
// an actor creates its own through cowboy_sdk.tokens, mints to its cap,
// pulls an approved amount, and sees refusals as HostErrors that change
// nothing; the transaction path fails with the module's codes.
func TestPlatformTokens(t *testing.T) {
	alice, _ := genKey()
	bobKey, _ := crypto.ToECDSA(crypto.Keccak256([]byte("bob")))
	c := newChain(t, alice, bobKey)
	aliceAddr, bob := types.PubkeyToAddress(alice.PublicKey), types.PubkeyToAddress(bobKey.PublicKey)
	tm := types.TokenModuleAddress

	rs := c.ok(c.tx(alice, &tm, &types.TokenCreate{Name: "Gold", Symbol: "GLD", Decimals: 2, Cap: big.NewInt(1_000), Initial: big.NewInt(600)}, 0))
	var raw []byte
	if err := codec.Unmarshal(rs[0].Return, &raw); err != nil || len(raw) != 32 {
		t.Fatalf("create returned %x: %v", rs[0].Return, err)
	}
	gold := types.Hash(raw)
	c.ok(c.tx(alice, &tm, &types.TokenTransfer{ID: gold, To: bob, Amount: big.NewInt(100)}, 0))
	if b := tokenBalance(t, c, gold, bob); b.Int64() != 100 {
		t.Fatalf("bob holds %s", b)
	}
	// Bad input by transaction: the receipt carries the code, nothing moves.
	r := c.block(c.tx(bobKey, &tm, &types.TokenTransfer{ID: gold, To: aliceAddr, Amount: big.NewInt(101)}, 0))[0]
	if r.Status == types.ReceiptSuccess || system.Code(r.Code) != system.CodeTokenBalance {
		t.Fatalf("overdraft: %d %s", r.Code, r.Error)
	}
	r = c.block(c.tx(bobKey, &tm, &types.TokenMint{ID: gold, To: bob, Amount: big.NewInt(1)}, 0))[0]
	if system.Code(r.Code) != system.CodeNotMinter {
		t.Fatalf("mint by a non-minter: %d %s", r.Code, r.Error)
	}
	if b := tokenBalance(t, c, gold, bob); b.Int64() != 100 {
		t.Fatalf("bob holds %s after the refusals", b)
	}

	rs = c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(vaultActor), Salt: types.Bytes("vault")}, genesis.CBY(1)))
	vault := *rs[0].Created
	call := func(handler string, args ...any) *types.Receipt {
		t.Helper()
		return c.ok(c.tx(alice, &vault, &types.Call{Handler: handler, Args: cborArgs(args)}, 0))[0]
	}
	lastErr := func() string {
		s, _ := c.query(vault, "get", []any{"err"}).(string)
		return s
	}
	r = call("create", 500, 100)
	if err := codec.Unmarshal(r.Return, &raw); err != nil || len(raw) != 32 {
		t.Fatalf("actor's create returned %x: %v", r.Return, err)
	}
	vlt := types.Hash(raw)
	if len(r.Events) == 0 || r.Events[0].Emitter != tm || r.Events[0].Topic != tokens.TopicTokenCreated {
		t.Fatalf("create events %+v", r.Events)
	}
	info, _ := c.query(vault, "info", nil).(map[any]any)
	if info["name"] != "Vault Share" || info["symbol"] != "VLT" || info["decimals"] != uint64(6) || info["supply"] != uint64(100) || info["cap"] != uint64(500) {
		t.Fatalf("info %v", info)
	}
	call("pay", bob[:], 30)
	call("mint", bob[:], 400) // to the cap
	if e := lastErr(); e != "" {
		t.Fatalf("mint to the cap: %s", e)
	}
	call("mint", bob[:], 1)
	if e := lastErr(); !strings.Contains(e, "token_mint: SupplyCapExceeded") {
		t.Fatalf("mint above the cap: %q", e)
	}
	call("pay", bob[:], 71)
	if e := lastErr(); !strings.Contains(e, "token_transfer: TokenBalance") {
		t.Fatalf("overdraft: %q", e)
	}
	call("burn", 20)
	if got := [2]int64{tokenBalance(t, c, vlt, vault).Int64(), tokenBalance(t, c, vlt, bob).Int64()}; got != [2]int64{50, 430} {
		t.Fatalf("balances %v", got)
	}
	// Alice approves the vault for 40 gold; it pulls 25, then 20 is beyond the allowance.
	c.ok(c.tx(alice, &tm, &types.TokenApprove{ID: gold, Spender: vault, Amount: big.NewInt(40)}, 0))
	call("pull", gold[:], aliceAddr[:], 25)
	call("pull", gold[:], aliceAddr[:], 20)
	if e := lastErr(); !strings.Contains(e, "token_transfer_from: TokenAllowance") {
		t.Fatalf("beyond the allowance: %q", e)
	}
	if b := c.query(vault, "bal", []any{gold[:], vault[:]}); b != uint64(25) {
		t.Fatalf("vault holds %v gold", b)
	}
	// A read-only query cannot move tokens.
	if err := c.st.View(func(v *store.View) error {
		_, _, err := c.ex.Query(t.Context(), v, execution.BlockEnv{Height: v.Head().Height}, vault, types.Address{}, "approve", cborArgs([]any{bob[:], 5}))
		if err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("approve in a query: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// verify_signature and verify_eip712 from an actor: true, false, and
// malformed input or a wrong chain as a HostError.
func TestSignatureHostCalls(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(vaultActor), Salt: types.Bytes("sig")}, genesis.CBY(1)))
	vault := *rs[0].Created
	call := func(handler string, args ...any) (any, string) {
		t.Helper()
		r := c.ok(c.tx(alice, &vault, &types.Call{Handler: handler, Args: cborArgs(args)}, 0))[0]
		var v any
		if err := codec.Unmarshal(r.Return, &v); err != nil {
			t.Fatal(err)
		}
		e, _ := c.query(vault, "get", []any{"err"}).(string)
		return v, e
	}
	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("signer")))
	msg := []byte("withdraw 5")
	sig, _ := crypto.Sign(crypto.Keccak256(msg), key)
	a := crypto.PubkeyToAddress(key.PublicKey)
	if v, e := call("check", "secp256k1", a[:], msg, sig); v != true || e != "" {
		t.Fatalf("valid secp256k1: %v %q", v, e)
	}
	if v, e := call("check", "secp256k1", a[:], []byte("withdraw 50"), sig); v != false || e != "" {
		t.Fatalf("other message: %v %q", v, e)
	}
	if v, e := call("check", "dsa", a[:], msg, sig); v != nil || !strings.Contains(e, "unknown signature scheme") {
		t.Fatalf("unknown scheme: %v %q", v, e)
	}
	cow, _ := crypto.ToECDSA(crypto.Keccak256([]byte("cow")))
	hash, _, err := sigops.TypedDataHash([]byte(mailTypedData))
	if err != nil {
		t.Fatal(err)
	}
	esig, _ := crypto.Sign(hash, cow)
	cowAddr := crypto.PubkeyToAddress(cow.PublicKey)
	if v, e := call("check712", mailTypedData, esig, cowAddr.Hex(), 1); v != true || e != "" {
		t.Fatalf("EIP-712: %v %q", v, e)
	}
	if v, e := call("check712", mailTypedData, esig, cowAddr.Hex(), 5); v != nil || !strings.Contains(e, "wrong chain: the typed data is for chain 1, expected 5") {
		t.Fatalf("wrong chain: %v %q", v, e)
	}
	if v, e := call("check712", `{"types": [`, esig, cowAddr.Hex(), nil); v != nil || !strings.Contains(e, "malformed typed data") {
		t.Fatalf("malformed: %v %q", v, e)
	}
}

// mailTypedData is EIP-712's example message (chain 1).
const mailTypedData = `{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],"Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],"Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]},"primaryType":"Mail","domain":{"name":"Ether Mail","version":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},"message":{"from":{"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},"to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}}`

// TestTokenCostComparison measures examples/token: the hand-written
// ledger actor (ledger.py) against the CIP-20 platform token (token.py and
// the token_transfer instruction), on the same chain. The figures are
// deterministic (metering is consensus); docs/TOKENS.md records them. The
// platform transfer is the cost table's 1,000 cycles and 64 cells beyond
// the intrinsic cost, well below the metered Python ledger's.
func TestTokenCostComparison(t *testing.T) {
	alice, _ := genKey()
	bobKey, _ := crypto.ToECDSA(crypto.Keccak256([]byte("bob")))
	c := newChain(t, alice)
	bob := types.PubkeyToAddress(bobKey.PublicKey)
	read := func(name string) types.Bytes {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "token", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	deploy := func(name string) (*types.Receipt, types.Address) {
		r := c.ok(c.tx(alice, nil, &types.Deploy{Code: read(name), Salt: types.Bytes(name), InitHandler: "__init__", InitArgs: cborArgs([]any{1_000_000})}, 0))[0]
		return r, *r.Created
	}
	type row struct {
		what          string
		cycles, cells uint64
	}
	var rows []row
	add := func(what string, r *types.Receipt) {
		if r.Status != types.ReceiptSuccess {
			t.Fatalf("%s failed: %s", what, r.Error)
		}
		rows = append(rows, row{what, r.CyclesUsed, r.CellsUsed})
	}
	r, ledger := deploy("ledger.py")
	add("deploy ledger.py (hand-written)", r)
	r, tokenActor := deploy("token.py")
	add("deploy token.py (platform token)", r)
	id, ok := c.query(tokenActor, "token_id", nil).([]byte)
	if !ok || len(id) != 32 {
		t.Fatalf("token_id %v", id)
	}
	if got := tokenBalance(t, c, types.Hash(id), types.PubkeyToAddress(alice.PublicKey)); got.Int64() != 1_000_000 {
		t.Fatalf("deployer holds %s of the platform token", got)
	}
	ledgerXfer := c.ok(c.tx(alice, &ledger, &types.Call{Handler: "transfer", Args: cborArgs([]any{bob[:], 10})}, 0))[0]
	add("transfer: ledger.py call", ledgerXfer)
	tm := types.TokenModuleAddress
	platformXfer := c.ok(c.tx(alice, &tm, &types.TokenTransfer{ID: types.Hash(id), To: bob, Amount: big.NewInt(10)}, 0))[0]
	add("transfer: token_transfer instruction", platformXfer)
	if b := c.query(ledger, "balance_of", []any{bob[:]}); b != uint64(10) {
		t.Fatalf("ledger balance %v", b)
	}
	if b := tokenBalance(t, c, types.Hash(id), bob); b.Int64() != 10 {
		t.Fatalf("platform balance %s", b)
	}
	for _, r := range rows {
		t.Logf("| %s | %d | %d |", r.what, r.cycles, r.cells)
	}
	if platformXfer.CyclesUsed >= ledgerXfer.CyclesUsed || platformXfer.CellsUsed >= ledgerXfer.CellsUsed {
		t.Fatalf("platform transfer %d cycles %d cells, not below the ledger's %d and %d",
			platformXfer.CyclesUsed, platformXfer.CellsUsed, ledgerXfer.CyclesUsed, ledgerXfer.CellsUsed)
	}
}

const opsActor = `from cowboy_sdk import actor, tokens

@actor
class Ops:
    def create(self, name, symbol):
        tokens.create(name, symbol, 0, 0, 1000)

    def transfer(self, tid, to, n):
        tokens.transfer(tid, to, n)

    def transfer_from(self, tid, owner, to, n):
        tokens.transfer_from(tid, owner, to, n)

    def approve(self, tid, spender, n):
        tokens.approve(tid, spender, n)

    def mint(self, tid, to, n):
        tokens.mint(tid, to, n)

    def burn(self, tid, n):
        tokens.burn(tid, n)

    def balance_of(self, tid, who):
        tokens.balance_of(tid, who)

    def noop(self, *args):
        pass
`

// The cost table end to end: a token instruction's receipt is its
// intrinsic cost plus exactly the §17.3 cycles and cells; an actor's call
// that only runs one token op uses exactly the op's cells beyond the
// cells of a call that does nothing (its cycles also pay the Python
// around it).
func TestTokenCostTableEndToEnd(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	aliceAddr := types.PubkeyToAddress(alice.PublicKey)
	tm := types.TokenModuleAddress
	exact := func(in types.Instruction, want tokens.Cost) *types.Receipt {
		t.Helper()
		tx := c.tx(alice, &tm, in, 0)
		r := c.ok(tx)[0]
		ic, ib := fees.Intrinsic(tx, in)
		if r.CyclesUsed != ic+want.Cycles || r.CellsUsed != ib+want.Cells {
			t.Errorf("%s: %d cycles %d cells, want %d+%d and %d+%d", in.InstructionKind(), r.CyclesUsed, r.CellsUsed, ic, want.Cycles, ib, want.Cells)
		}
		return r
	}
	exact(&types.TokenCreate{Name: "Gold", Symbol: "GLD", Initial: big.NewInt(100)}, tokens.Cost{Cycles: 10_000, Cells: 256 + 4 + 3})
	gold := tokens.ID(aliceAddr, 0)
	rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(opsActor), Salt: types.Bytes("ops")}, genesis.CBY(1)))
	ops := *rs[0].Created
	exact(&types.TokenTransfer{ID: gold, To: ops, Amount: big.NewInt(10)}, tokens.Cost{Cycles: 1_000, Cells: 64})
	exact(&types.TokenApprove{ID: gold, Spender: ops, Amount: big.NewInt(10)}, tokens.Cost{Cycles: 500, Cells: 32})

	// extraCells is what a call uses beyond its intrinsic cells.
	extraCells := func(handler string, args ...any) uint64 {
		t.Helper()
		in := &types.Call{Handler: handler, Args: cborArgs(args)}
		tx := c.tx(alice, &ops, in, 0)
		r := c.ok(tx)[0]
		_, ib := fees.Intrinsic(tx, in)
		return r.CellsUsed - ib
	}
	base := extraCells("noop", gold[:]) // the call's own (its return value)
	opCells := func(handler string, want uint64, args ...any) {
		t.Helper()
		if got := extraCells(handler, args...) - base; got != want {
			t.Errorf("actor %s: %d cells beyond a no-op call, want %d", handler, got, want)
		}
	}
	opCells("create", uint64(256+len("Share")+len("SHR")), "Share", "SHR")
	opCells("transfer", 64, gold[:], aliceAddr[:], 1)
	opCells("transfer_from", 96, gold[:], aliceAddr[:], ops[:], 2)
	opCells("approve", 32, gold[:], aliceAddr[:], 3)
	share := tokens.ID(ops, 1)
	opCells("mint", 64, share[:], aliceAddr[:], 4)
	opCells("burn", 64, share[:], 5)
	opCells("balance_of", 0, gold[:], aliceAddr[:])
	if b := tokenBalance(t, c, gold, ops); b.Int64() != 10-1+2 {
		t.Fatalf("ops holds %s gold", b)
	}
}
