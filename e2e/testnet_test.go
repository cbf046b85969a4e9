package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"math/big"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// tnet is a local testnet made by `cowboy testnet init`, its validators
// run as cowboyd processes by the test.
type tnet struct {
	t     *testing.T
	dir   string
	man   *node.Testnet
	procs []*daemon
	extra []string // extra cowboyd flags
}

// freeBases finds RPC and P2P port ranges of n ports each that are free
// now (TCP for the API, UDP for QUIC).
func freeBases(t *testing.T, n int) (rpc, p2p int) {
	t.Helper()
	free := func(base int) bool {
		var cs []interface{ Close() error }
		defer func() {
			for _, c := range cs {
				c.Close()
			}
		}()
		for i := range n {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
			if err != nil {
				return false
			}
			cs = append(cs, l)
			u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(base+n+i))
			if err != nil {
				return false
			}
			cs = append(cs, u)
		}
		return true
	}
	for range 100 {
		base := 20000 + rand.IntN(30000)
		if free(base) {
			return base, base + n
		}
	}
	t.Fatal("no free port range")
	return 0, 0
}

func newTestnet(t *testing.T, n int, extra ...string) *tnet {
	t.Helper()
	dir := t.TempDir()
	rpc, p2p := freeBases(t, n)
	cmd := exec.Command(filepath.Join(binDir, "cowboy"), "testnet", "init", "--dir", dir, "--validators", strconv.Itoa(n),
		"--rpc-port", strconv.Itoa(rpc), "--p2p-port", strconv.Itoa(p2p),
		"--block-interval", "150ms", "--view-timeout", "800ms", "--tick", "50ms")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testnet init: %v\n%s", err, out)
	}
	man, err := node.LoadTestnet(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &tnet{t: t, dir: dir, man: man, procs: make([]*daemon, n), extra: extra}
}

// start runs validator i (not waiting for it to answer).
func (tn *tnet) start(i int) {
	t := tn.t
	t.Helper()
	nd := tn.man.Nodes[i]
	_, port, _ := net.SplitHostPort(nd.RPC)
	p, _ := strconv.Atoi(port)
	d := &daemon{t: t, home: nd.Home, port: p, log: &bytes.Buffer{}, done: make(chan error, 1)}
	args := append([]string{"--home", nd.Home, "--no-pvm", "--log-level", "info"}, tn.extra...)
	d.cmd = exec.Command(filepath.Join(binDir, "cowboyd"), args...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		d.kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", nd.Name, tailLines(d.log.String(), 40))
		}
	})
	tn.procs[i] = d
}

func tailLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

func (tn *tnet) client(i int) *sdk.Client { return sdk.New("http://" + tn.man.Nodes[i].RPC) }

// height is validator i's executed height, or -1 if it does not answer.
func (tn *tnet) height(i int) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := tn.client(i).Chain().Status(ctx)
	if err != nil {
		return -1
	}
	return int64(st.Height)
}

// waitHeight waits until every listed validator has executed height h.
func (tn *tnet) waitHeight(h int64, timeout time.Duration, nodes ...int) {
	tn.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		var hs []int64
		for _, i := range nodes {
			x := tn.height(i)
			hs = append(hs, x)
			if x < h {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tn.t.Fatalf("validators %v did not reach height %d within %v (at %v)", nodes, h, timeout, hs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (tn *tnet) maxHeight(nodes ...int) int64 {
	var m int64 = -1
	for _, i := range nodes {
		m = max(m, tn.height(i))
	}
	return m
}

// checkSameChain requires the listed validators to hold identical blocks
// at every height they share: no fork, same state roots.
func (tn *tnet) checkSameChain(nodes ...int) {
	tn.t.Helper()
	ctx := context.Background()
	top := int64(-1)
	for _, i := range nodes {
		h := tn.height(i)
		if top < 0 || h < top {
			top = h
		}
	}
	for h := int64(1); h <= top; h++ {
		var want types.Hash
		for k, i := range nodes {
			b, err := tn.client(i).Chain().Block(ctx, strconv.FormatInt(h, 10), false)
			if err != nil {
				tn.t.Fatalf("node%d block %d: %v", i, h, err)
			}
			if k == 0 {
				want = b.Hash
			} else if b.Hash != want {
				tn.t.Fatalf("fork at height %d: node%d has %s, node%d has %s", h, nodes[0], want, i, b.Hash)
			}
		}
	}
}

// transfer sends value from key to `to` through validator via and waits
// for the receipt on validator at.
func (tn *tnet) transfer(key *ecdsa.PrivateKey, to types.Address, value int64, via, at int) {
	tn.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tx, err := tn.client(via).Account(key).Transfer(ctx, to, big.NewInt(value), sdk.TxOptions{})
	if err != nil {
		tn.t.Fatalf("transfer via node%d: %v", via, err)
	}
	// The receipt shows up on `at` once the block is final and executed there.
	if _, err := tn.client(at).Chain().WaitForReceipt(ctx, tx.Hash()); err != nil {
		tn.t.Fatalf("transfer %s not final on node%d: %v", tx.Hash(), at, err)
	}
}

// TestTestnetFourValidators runs a 4-validator network on loopback through
// the faults issue 5 names: one validator killed (blocks continue), a
// second killed (blocks stop), one back (blocks resume without a fork),
// every validator restarted (the chain resumes from disk), and a validator
// that joins late with an empty database (it syncs from genesis, through
// block sync: its peers keep only 8 finalized blocks in memory).
func TestTestnetFourValidators(t *testing.T) {
	tn := newTestnet(t, 4, "--consensus-retain", "8")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i := range 4 {
		tn.start(i)
	}
	all := []int{0, 1, 2, 3}
	tn.waitHeight(3, 30*time.Second, all...)

	// Live network: fund alice from node0's faucet, transfer through node2,
	// see it final on node3; every node agrees on the chain.
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	alice := types.PubkeyToAddress(key.PublicKey)
	bob := types.Address{0xb0, 0xb0}
	fh, err := tn.client(0).Chain().Faucet(ctx, alice, new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tn.client(1).Chain().WaitForReceipt(ctx, fh); err != nil {
		t.Fatal(err)
	}
	tn.transfer(key, bob, 1, 2, 3)
	st, err := tn.client(3).Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Consensus == nil || st.Consensus.Validators != 4 || st.FinalizedHeight < st.Height || st.CommittedHeight < st.FinalizedHeight {
		t.Fatalf("status: %+v consensus %+v", st, st.Consensus)
	}

	// Kill one: the other three still make a quorum.
	tn.procs[3].kill()
	h := tn.maxHeight(0, 1, 2)
	tn.waitHeight(h+5, 20*time.Second, 0, 1, 2)
	tn.transfer(key, bob, 2, 1, 0)

	// Kill a second: two of four cannot certify anything.
	tn.procs[2].kill()
	time.Sleep(2 * time.Second) // let in-flight rounds settle
	stalled := tn.maxHeight(0, 1)
	time.Sleep(3 * time.Second)
	if now := tn.maxHeight(0, 1); now != stalled {
		t.Fatalf("blocks finalized with half the validators down: %d -> %d", stalled, now)
	}
	// Submitted while stalled, final once a third validator is back.
	pending, err := tn.client(0).Account(key).Transfer(ctx, bob, big.NewInt(3), sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Bring node2 back (from its disk and WAL): blocks resume, no fork.
	tn.start(2)
	tn.waitHeight(stalled+5, 30*time.Second, 0, 1, 2)
	if _, err := tn.client(2).Chain().WaitForReceipt(ctx, pending.Hash()); err != nil {
		t.Fatal(err)
	}
	tn.checkSameChain(0, 1, 2)

	// Restart every running validator: the chain resumes from disk.
	for _, i := range []int{0, 1, 2} {
		tn.procs[i].stop()
	}
	for _, i := range []int{0, 1, 2} {
		tn.start(i)
	}
	tn.waitHeight(0, 20*time.Second, 0, 1, 2)
	before := tn.maxHeight(0, 1, 2)
	tn.waitHeight(before+5, 30*time.Second, 0, 1, 2)
	tn.transfer(key, bob, 4, 0, 2)

	// A late joiner: node3 comes back with an empty chain database (its
	// consensus WAL kept, as an operator must) and syncs from genesis.
	for _, f := range []string{"chain.db", "consensus.db"} {
		if err := os.Remove(filepath.Join(tn.man.Nodes[3].Home, "data", f)); err != nil {
			t.Fatal(err)
		}
	}
	target := tn.maxHeight(0, 1, 2)
	tn.start(3)
	tn.waitHeight(target+3, 60*time.Second, all...)
	tn.checkSameChain(all...)
	if !strings.Contains(tn.procs[3].log.String(), "synced finalized blocks") {
		t.Errorf("node3 caught up without block sync:\n%s", tailLines(tn.procs[3].log.String(), 30))
	}
	bal, err := tn.client(3).Chain().Balance(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(big.NewInt(1+2+3+4)) != 0 {
		t.Fatalf("bob's balance on the late joiner: %s, want 10", bal)
	}
	t.Logf("final heights: %d %d %d %d", tn.height(0), tn.height(1), tn.height(2), tn.height(3))
}

// TestTestnetSoak (COWBOY_SOAK=1, `make soak`) runs a 4-validator network
// for COWBOY_SOAK_MINUTES (default 3) while one validator at a time is
// killed with SIGKILL and restarted, and transfers keep flowing; at the end
// every validator holds the same chain and the transfers' total.
func TestTestnetSoak(t *testing.T) {
	if os.Getenv("COWBOY_SOAK") == "" {
		t.Skip("set COWBOY_SOAK=1")
	}
	minutes := 3
	if v, err := strconv.Atoi(os.Getenv("COWBOY_SOAK_MINUTES")); err == nil && v > 0 {
		minutes = v
	}
	tn := newTestnet(t, 4)
	for i := range 4 {
		tn.start(i)
	}
	all := []int{0, 1, 2, 3}
	tn.waitHeight(3, 30*time.Second, all...)
	ctx := context.Background()
	key, _ := crypto.GenerateKey()
	bob := types.Address{0xb0, 0xb1}
	fh, err := tn.client(0).Chain().Faucet(ctx, types.PubkeyToAddress(key.PublicKey), new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tn.client(0).Chain().WaitForReceipt(ctx, fh); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	end := time.Now().Add(time.Duration(minutes) * time.Minute)
	var sent int64
	kills := 0
	for time.Now().Before(end) {
		victim := rng.IntN(4)
		tn.procs[victim].kill()
		kills++
		live := []int{}
		for _, i := range all {
			if i != victim {
				live = append(live, i)
			}
		}
		via := live[rng.IntN(len(live))]
		tn.transfer(key, bob, 1, via, live[0])
		sent++
		time.Sleep(time.Duration(1000+rng.IntN(4000)) * time.Millisecond)
		tn.start(victim)
		tn.waitHeight(tn.maxHeight(live...), 60*time.Second, victim)
	}
	tn.waitHeight(tn.maxHeight(all...)+3, 60*time.Second, all...)
	tn.checkSameChain(all...)
	for _, i := range all {
		bal, err := tn.client(i).Chain().Balance(ctx, bob)
		if err != nil || bal.Int64() != sent {
			t.Fatalf("node%d: bob has %v, want %d (%v)", i, bal, sent, err)
		}
	}
	t.Logf("%d kills, %d transfers, final height %d", kills, sent, tn.maxHeight(all...))
}

// TestTestnetValidatorJoins: a fifth validator joins a running 4-validator
// network through the CLI (BLS keygen, faucet, `cowboy validator
// register`), starts its node with only a genesis and bootstrap peers,
// syncs, and from the next epoch boundary (16 blocks) is in the set and
// signs QCs.
func TestTestnetValidatorJoins(t *testing.T) {
	tn := newTestnet(t, 4)
	tn.setEpochLength(16)
	for i := range 4 {
		tn.start(i)
	}
	tn.waitHeight(3, 30*time.Second, 0, 1, 2, 3)

	home := filepath.Join(tn.dir, "node4")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(node.GenesisPath(tn.man.Nodes[0].Home))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(node.GenesisPath(home), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cliHome := t.TempDir()
	d0 := tn.procs[0]
	cli(t, d0, cliHome, "validator", "keygen", "--out", filepath.Join(home, "consensus.key"))
	cli(t, d0, cliHome, "keys", "new", "joiner", "--light-kdf")
	out := cli(t, d0, cliHome, "faucet", "joiner", "--value", "50000")
	if !strings.Contains(out, "success") {
		t.Fatalf("faucet: %s", out)
	}
	out = cli(t, d0, cliHome, "validator", "register", "--from", "joiner", "--bls-key", filepath.Join(home, "consensus.key"), "--stake", "20000")
	if !strings.Contains(out, "success") {
		t.Fatalf("register: %s", out)
	}

	// The joiner's node: genesis, key and the four peers, nothing else.
	rpc, p2p := freeBases(t, 1)
	var boot []string
	for _, nd := range tn.man.Nodes {
		boot = append(boot, nd.Address.String()+"@"+nd.P2P)
	}
	d := &daemon{t: t, home: home, port: rpc, log: &bytes.Buffer{}, done: make(chan error, 1)}
	d.cmd = exec.Command(filepath.Join(binDir, "cowboyd"), "--home", home, "--no-pvm", "--log-level", "info",
		"--rpc", "127.0.0.1:"+strconv.Itoa(rpc), "--p2p", "127.0.0.1:"+strconv.Itoa(p2p), "--bootstrap", strings.Join(boot, ","))
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		d.kill()
		if t.Failed() || os.Getenv("COWBOY_E2E_LOGS") != "" {
			t.Logf("node4 log:\n%s", tailLines(d.log.String(), 40))
		}
	})

	ctx := context.Background()
	c4 := d.client()
	deadline := time.Now().Add(90 * time.Second)
	for {
		st, err := c4.Chain().Status(ctx)
		h0 := tn.height(0)
		if err == nil && st.Consensus != nil && st.Consensus.Validators == 5 && st.Consensus.Index >= 0 && int64(st.Height)+3 >= h0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node4 never joined: status %+v (node0 at %d)", st, h0)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Its votes are in the QCs: find its bit in a recent ParentQC.
	st, _ := c4.Chain().Status(ctx)
	idx := st.Consensus.Index
	signed := false
	for tries := 0; tries < 100 && !signed; tries++ {
		top := tn.height(0)
		blk, err := tn.client(0).Chain().Block(ctx, strconv.FormatInt(top, 10), false)
		if err != nil {
			t.Fatal(err)
		}
		var qc consensus.QC
		if err := codec.Unmarshal(blk.Header.ParentQC, &qc); err == nil && len(qc.Signers) > idx/8 && qc.Signers[idx/8]&(1<<(idx%8)) != 0 {
			signed = true
		}
		time.Sleep(150 * time.Millisecond)
	}
	if !signed {
		t.Fatal("node4's votes never made it into a QC")
	}
	tn.checkSameChain(0, 1, 2, 3)
	ctx5, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b4, err := c4.Chain().Block(ctx5, "5", false)
	if err != nil {
		t.Fatal(err)
	}
	b0, err := tn.client(0).Chain().Block(ctx5, "5", false)
	if err != nil || b0.Hash != b4.Hash {
		t.Fatalf("node4 block 5 %s, node0 %v %v", b4.Hash, b0, err)
	}

	// Restart all five in a later epoch: each resumes from its disk with
	// the epoch's set and its recorded round floor.
	for i := range 4 {
		tn.procs[i].stop()
	}
	d.stop()
	before := tn.maxHeight(0)
	for i := range 4 {
		tn.start(i)
	}
	d.done = make(chan error, 1)
	d.cmd = exec.Command(d.cmd.Path, d.cmd.Args[1:]...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	tn.waitHeight(0, 20*time.Second, 0, 1, 2, 3)
	before = max(before, tn.maxHeight(0, 1, 2, 3))
	tn.waitHeight(before+20, 60*time.Second, 0, 1, 2, 3)
	tn.checkSameChain(0, 1, 2, 3)
}
