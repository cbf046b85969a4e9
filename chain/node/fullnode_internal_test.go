package node

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// oneValidatorNet is a consensus network with one BLS validator (itself
// the quorum) whose epochs last epochLen blocks.
type oneValidatorNet struct {
	g       *genesis.Genesis
	home    string
	key     *bls.SecretKey
	addr    types.Address
	listen  string
	testLog io.Writer
}

func newOneValidatorNet(t *testing.T, epochLen uint64) *oneValidatorNet {
	t.Helper()
	key, err := bls.KeyFromSeed(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := crypto.GenerateKey()
	faucet, _ := crypto.GenerateKey()
	o := &oneValidatorNet{home: t.TempDir(), key: key, addr: types.PubkeyToAddress(acct.PublicKey), testLog: io.Discard}
	if os.Getenv("COWBOY_NODE_TEST_LOG") != "" {
		o.testLog = os.Stderr
	}
	o.g = genesis.Testnet(uint64(time.Now().UnixMilli()), []genesis.Validator{{
		Address: o.addr, Stake: 10_000, BLSKey: key.PublicKey().Bytes(), BLSPoP: key.ProvePossession().Bytes(),
	}}, types.PubkeyToAddress(faucet.PublicKey), genesis.Consensus{EpochLength: epochLen})
	if err := o.g.Save(GenesisPath(o.home)); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFile(FaucetKeyPath(o.home), faucet); err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.listen = c.LocalAddr().String()
	c.Close()
	return o
}

func (o *oneValidatorNet) logger(name string) *slog.Logger {
	return slog.New(slog.NewTextHandler(o.testLog, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", name)
}

// validator opens the validator's node.
func (o *oneValidatorNet) validator(t *testing.T) *Node {
	t.Helper()
	n, err := Open(Config{Home: o.home, BlockInterval: 20 * time.Millisecond, Logger: o.logger("validator"),
		Network: &Network{Key: o.key, Listen: o.listen, Tick: 10 * time.Millisecond, TimeoutTicks: 30}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fullNode opens a full node of the network in a fresh home.
func (o *oneValidatorNet) fullNode(t *testing.T) *Node {
	t.Helper()
	home := t.TempDir()
	if err := o.g.Save(GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	return o.fullNodeAt(t, home)
}

// fullNodeAt opens the full node whose home is home.
func (o *oneValidatorNet) fullNodeAt(t *testing.T, home string) *Node {
	t.Helper()
	k, err := LoadOrCreateNodeKey(NodeKeyPath(home))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Home: home, Logger: o.logger("full"),
		Network: &Network{Key: k, Full: true, Listen: "127.0.0.1:0", Bootstrap: map[types.Address]string{o.addr: o.listen}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// run runs n until the test ends or the returned stop is called.
func run(t *testing.T, n *Node) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
			n.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// submitTransfer submits a 1 CBY transfer (nonce 0) from key to the
// node's API and returns its hash.
func submitTransfer(t *testing.T, n *Node, key *ecdsa.PrivateKey, to types.Address) types.Hash {
	t.Helper()
	tx, _ := types.NewTx(types.TxData{ChainID: n.gen.ChainID, Nonce: 0, To: &to, Value: genesis.CBY(1),
		CyclesLimit: 100_000, CellsLimit: 10_000, MaxFeePerCycle: 1e11, MaxFeePerCell: 1e11})
	signed, _ := types.SignTx(tx, key)
	h, err := n.SubmitTx(signed.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// waitFor polls cond until it holds or 60 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func head(t *testing.T, n *Node) *types.Header {
	t.Helper()
	h, err := n.Store().Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func receiptOf(t *testing.T, n *Node, h types.Hash) *types.Receipt {
	t.Helper()
	var r *types.Receipt
	if err := n.Store().View(func(v *store.View) error {
		_, _, r, _ = v.FindTx(h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFullNodeFollowsAndForwards: a full node follows a one-validator
// network across several epoch hand-offs (each batch checked against the
// set its own state elected), commits the validator's blocks byte for
// byte, and a transfer submitted to the full node's API reaches the
// validator, is finalized, and shows on both. It never votes.
func TestFullNodeFollowsAndForwards(t *testing.T) {
	nw := newOneValidatorNet(t, 8)
	val := nw.validator(t)
	run(t, val)
	full := nw.fullNode(t)
	stopFull := run(t, full)

	alice, _ := crypto.GenerateKey()
	aliceAddr := types.PubkeyToAddress(alice.PublicKey)
	fh, err := val.Faucet(aliceAddr, genesis.CBY(10))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the faucet grant on the full node", func() bool { return receiptOf(t, full, fh) != nil })

	bob := types.Address{0xb0}
	h := submitTransfer(t, full, alice, bob)
	waitFor(t, "the transfer on the validator", func() bool { return receiptOf(t, val, h) != nil })
	waitFor(t, "the transfer on the full node", func() bool { return receiptOf(t, full, h) != nil })
	if r := receiptOf(t, full, h); r.Status != types.ReceiptSuccess {
		t.Fatalf("transfer: %s", r.Error)
	}
	if err := full.Store().View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, bob)
		if err == nil && acc.Balance.Cmp(genesis.CBY(1)) != 0 {
			t.Fatalf("bob's balance on the full node: %s", acc.Balance)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// Past two epoch boundaries, the full node holds the validator's chain.
	target := 2*8 + 3
	waitFor(t, "the full node past two epochs", func() bool { return head(t, full).Height >= uint64(target) })
	for hgt := uint64(1); hgt <= uint64(target); hgt++ {
		var a, b *types.Block
		_ = val.Store().View(func(v *store.View) error { a, _ = v.Block(hgt); return nil })
		_ = full.Store().View(func(v *store.View) error { b, _ = v.Block(hgt); return nil })
		if a == nil || b == nil || a.Hash() != b.Hash() {
			t.Fatalf("block %d differs between the validator and the full node", hgt)
		}
	}
	// The status is published after each batch is executed.
	waitFor(t, "the full node's status", func() bool {
		cs, ok := full.Consensus()
		return ok && cs.FinalizedHeight >= uint64(target)
	})
	cs, _ := full.Consensus()
	if cs.Role != RoleFull || cs.Index != -1 || cs.Epoch < 2 || cs.SyncTarget < uint64(target) || cs.Peers != 1 {
		t.Fatalf("full node status %+v", cs)
	}
	vs, _ := val.Consensus()
	if vs.Peers != 0 || vs.Role != RoleValidator {
		t.Fatalf("validator status %+v: a full node must not count as a peer", vs)
	}

	// A restart resumes from the full node's finalized-block log.
	home, at := full.cfg.Home, head(t, full).Height
	stopFull()
	again := nw.fullNodeAt(t, home)
	run(t, again)
	waitFor(t, "the restarted full node to move on", func() bool { return head(t, again).Height > at+2 })
}

// syncedRecords runs a one-validator network to height 6 and returns
// its finalized records 1.., ending with one that has a finality proof.
func syncedRecords(t *testing.T, nw *oneValidatorNet) []finalRecord {
	t.Helper()
	val := nw.validator(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- val.Run(ctx) }()
	waitFor(t, "height 6", func() bool { return head(t, val).Height >= 6 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	val.Close()
	l, err := openFinalLog(ConsensusDBPath(nw.home))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recs, err := l.Range(1, 4, 1<<20)
	if err != nil || len(recs) < 3 { // the gap case below needs a record after the one it drops
		t.Fatalf("records: %d, %v", len(recs), err)
	}
	return recs
}

// resign replaces every signature that proves the last record final with
// one by key over the right message: a header signed by keys that are not
// the validators'.
func resign(recs []finalRecord, domain uint64, key *bls.SecretKey) []finalRecord {
	out := cloneRecords(recs)
	last := &out[len(out)-1]
	sign := func(qc *consensus.QC) {
		qc.Signature = key.Sign(consensus.VoteMessage(domain, qc.BlockHash, qc.Height, qc.Round)).Bytes()
	}
	sign(&last.QC)
	sign(&last.Proof.ChildQC)
	return out
}

func cloneRecords(recs []finalRecord) []finalRecord {
	var out []finalRecord
	if err := codec.Unmarshal(codec.MustMarshal(recs), &out); err != nil {
		panic(err)
	}
	return out
}

// TestFullNodeRefusesBadSync: garbage, a batch that does not link, a
// forged finality proof and QCs signed by non-validators are each refused
// with the matching error, the peer is scored down, and the follower
// still takes the honest batch afterwards; a peer that does not answer in
// time is scored down and the request goes out again.
func TestFullNodeRefusesBadSync(t *testing.T) {
	nw := newOneValidatorNet(t, 0)
	recs := syncedRecords(t, nw)
	full := nw.fullNode(t)
	defer full.Close()
	f, err := full.newFollower()
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	ctx := context.Background()
	reply := func(rs []finalRecord) []byte { return codec.MustMarshal(&syncReply{Records: rs, Finalized: 100}) }
	domain := consensus.EpochDomain(nw.g.ChainID, 0)

	forged := cloneRecords(recs)
	p := forged[len(forged)-1].Proof
	p.ChildQC.Signature = nw.key.Sign([]byte("not a vote")).Bytes() // the validator's key, wrong message
	outsider, _ := bls.GenerateKey(nil)
	gap := cloneRecords(recs)
	gap = append(gap[:1], gap[2:]...)

	score := 0
	for _, c := range []struct {
		name    string
		data    []byte
		want    error
		penalty int
	}{
		{"garbage", []byte{0xff, 0x00, 0x13}, ErrSyncGarbage, penaltyBroken},
		{"gap", reply(gap), ErrSyncBroken, penaltyBroken},
		{"forged proof", reply(forged), ErrSyncProof, penaltyProof},
		{"signed by a non-validator", reply(resign(recs, domain, outsider)), ErrSyncProof, penaltyProof},
	} {
		if _, err := f.onSyncReply(ctx, p2p.Inbound{From: 0, Kind: p2p.KindSyncReply, Data: c.data}); !errors.Is(err, c.want) {
			t.Fatalf("%s: err %v, want %v", c.name, err, c.want)
		}
		f.onInbound(ctx, p2p.Inbound{From: 0, Kind: p2p.KindSyncReply, Data: c.data})
		score -= c.penalty
		if got := f.scores.of(0); got != score || f.root.Height != 0 || head(t, full).Height != 0 {
			t.Fatalf("%s: score %d (want %d), root %d, head %d", c.name, got, score, f.root.Height, head(t, full).Height)
		}
	}

	// The honest batch is still taken and executed.
	f.onInbound(ctx, p2p.Inbound{From: 0, Kind: p2p.KindSyncReply, Data: reply(recs)})
	last := recs[len(recs)-1].Block
	if f.root.Height != last.Height || head(t, full).Height != last.Height || f.target != 100 {
		t.Fatalf("after the honest batch: root %d, head %d, target %d; want %d", f.root.Height, head(t, full).Height, f.target, last.Height)
	}
	if f.scores.of(0) != score+scoreUpOnBatch {
		t.Fatalf("score after an honest batch %d, want %d", f.scores.of(0), score+scoreUpOnBatch)
	}

	// A stalled request: scored down and asked again.
	score = f.scores.of(0)
	f.waiting, f.asked, f.askedAt = true, 0, time.Now().Add(-2*syncStall)
	if err := f.step(ctx); err != nil {
		t.Fatal(err)
	}
	if f.scores.of(0) != score-penaltyStall || !f.waiting || time.Since(f.askedAt) > syncStall {
		t.Fatalf("after a stall: score %d (want %d), waiting %v, asked %v ago", f.scores.of(0), score-penaltyStall, f.waiting, time.Since(f.askedAt))
	}
}

// TestPeerScoresPick: the best score wins, equals rotate, and peers the
// filter refuses are never picked.
func TestPeerScoresPick(t *testing.T) {
	s := newPeerScores()
	if a, b := s.pick(3, nil), s.pick(3, nil); a == b {
		t.Fatalf("equal scores did not rotate: %d, %d", a, b)
	}
	s.down(0, penaltyStall)
	s.down(1, penaltyProof)
	for range 5 {
		if p := s.pick(3, nil); p != 2 {
			t.Fatalf("picked %d, want the unpunished 2", p)
		}
	}
	if p := s.pick(3, func(i int) bool { return i != 2 }); p != 0 {
		t.Fatalf("picked %d, want 0 (2 unusable, 1 scored lowest)", p)
	}
	if p := s.pick(3, func(int) bool { return false }); p != -1 {
		t.Fatalf("picked %d with no usable peer", p)
	}
}

// TestFullNodeRelaysAgain: a transaction submitted to a full node while
// no validator is reachable (its first relay fails) still reaches the
// validator once it is up, and is finalized.
func TestFullNodeRelaysAgain(t *testing.T) {
	nw := newOneValidatorNet(t, 0)
	full := nw.fullNode(t)
	run(t, full)
	faucet, err := LoadKeyFile(FaucetKeyPath(nw.home))
	if err != nil {
		t.Fatal(err)
	}
	bob := types.Address{0xb0}
	h := submitTransfer(t, full, faucet, bob)
	// Let the first relay give up (its send times out after 2 s) before
	// the validator listens: only a second relay can deliver it now.
	time.Sleep(3 * time.Second)
	val := nw.validator(t)
	run(t, val)
	waitFor(t, "the transfer on the full node", func() bool { return receiptOf(t, full, h) != nil })
}

// TestFullNodeLearnsValidatorAddrs: a full node whose bootstrap list lacks
// a validator's address asks nobody, then dials it once a validator's
// verified answer names it.
func TestFullNodeLearnsValidatorAddrs(t *testing.T) {
	nw := newOneValidatorNet(t, 0)
	home := t.TempDir()
	if err := nw.g.Save(GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	k, _ := bls.GenerateKey(nil)
	n, err := Open(Config{Home: home, Logger: nw.logger("full"), Network: &Network{Key: k, Full: true, Listen: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	f, err := n.newFollower()
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	f.request()
	if f.waiting {
		t.Fatal("asked a validator it has no address for")
	}
	rep := codec.MustMarshal(&syncReply{Validators: []validatorAddr{{Address: nw.addr, Addr: "127.0.0.1:4321"}}})
	if _, err := f.onSyncReply(context.Background(), p2p.Inbound{From: 0, Kind: p2p.KindSyncReply, Data: rep}); err != nil {
		t.Fatal(err)
	}
	if a := f.tr.Addrs()[0]; a != "127.0.0.1:4321" {
		t.Fatalf("validator 0's address %q after the answer", a)
	}
	if peers, err := f.configure(); err != nil || peers[0].Addr != "127.0.0.1:4321" {
		t.Fatalf("a new epoch's peers %+v, %v: the learnt address is lost", peers, err)
	}
	f.request()
	if !f.waiting || f.asked != 0 {
		t.Fatal("did not ask the validator it learnt")
	}
}
