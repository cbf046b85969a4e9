package relay_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// buildCowboyd builds the chain node next to the relay binary.
func buildCowboyd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(relayBin), "cowboyd")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	out, err := exec.Command("go", "build", "-o", bin, "github.com/cowboy-foundation/cowboy/cmd/cowboyd").CombinedOutput()
	if err != nil {
		t.Fatalf("build cowboyd: %v\n%s", err, out)
	}
	return bin
}

// startProc starts a process that is killed when the test ends; its output
// is logged if the test fails.
func startProc(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	logBuf := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logBuf, logBuf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if t.Failed() {
			logBuf.mu.Lock()
			t.Logf("%s %s log:\n%s", filepath.Base(name), strings.Join(args[:min(len(args), 3)], " "), tail(logBuf.b.String(), 40))
			logBuf.mu.Unlock()
		}
	})
	return cmd
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestChallengesAndRentOnDevnet runs a devnet node and six relay daemons
// registered on it. A 4+2 volume is stored and funded; one relay's shards
// are then tampered with and deleted on disk. Within a few storage epochs
// the healthy relays have answered their challenges automatically and been
// paid rent from the volume's escrow, while the tampered relay has missed
// its challenge and is flagged (unhealthy), so repair moves its shards.
func TestChallengesAndRentOnDevnet(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process devnet test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The owner repairs here (below); the relays' own repair is tested in
	// TestSelfHealingOnDevnet.
	dn := startDevnet(t, ctx, 6, "--heal-interval", "0")
	c, url, root, fund, relays := dn.c, dn.url, dn.root, dn.fund(t, ctx), dn.relays

	owner, _ := crypto.GenerateKey()
	fund(types.PubkeyToAddress(owner.PublicKey), "100")
	anchor := &onchain.Anchor{Client: c, Key: owner, K: 4, M: 2}
	cc, err := cbfs.New(cbfs.Config{Key: owner, Directory: onchain.Directory{Client: c}, Anchor: anchor, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	vol, err := cc.CreateVolume(ctx, cbfs.VolumeOptions{K: 4, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3<<20)
	(&patterned{n: int64(len(data)), seed: 7}).Read(data)
	if _, err := vol.Put(ctx, "/data.bin", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	// The commit is durable on the relays; anchor its checkpoint now.
	if err := vol.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	vid := types.Hash(vol.ID())
	v, err := c.Volumes().Get(ctx, vid)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Placement) != 6 || v.Rent == nil || v.Rent.ShardBytes == 0 {
		t.Fatalf("commitment without a full placement: %+v", v)
	}
	// used_bytes × erasure_overhead × rate: shard bytes are 6/4 of the data.
	if v.Rent.ShardBytes < uint64(len(data))*6/4 {
		t.Fatalf("shard bytes %d for %d bytes at 4+2", v.Rent.ShardBytes, len(data))
	}
	if err := anchor.FundVolume(ctx, vol.ID(), sdk.MustCBY("1")); err != nil {
		t.Fatal(err)
	}
	// A second, small volume: every relay answers two challenges per epoch
	// (the daemon submits them together), and the bad relay still proves
	// this one.
	vol2, err := cc.CreateVolume(ctx, cbfs.VolumeOptions{K: 4, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vol2.Put(ctx, "/small.bin", bytes.NewReader(data[:100<<10])); err != nil {
		t.Fatal(err)
	}
	if err := vol2.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := anchor.FundVolume(ctx, vol2.ID(), sdk.MustCBY("1")); err != nil {
		t.Fatal(err)
	}

	// Ruin the last relay's holdings: corrupt some shard files, delete the
	// others (the relay keeps running; its store notices on read).
	bad := relays[5]
	prefix := hex.EncodeToString(vid[:])
	nbad := 0
	filepath.Walk(filepath.Join(bad.home, "data", "objects"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasPrefix(fi.Name(), prefix) || fi.Size() < 2048 {
			return nil // not a shard of this volume (placement lists and manifests are small)
		}
		if nbad%2 == 0 {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err == nil {
				f.WriteAt([]byte("tampered"), 0)
				f.Close()
			}
		} else {
			os.Remove(p)
		}
		nbad++
		return nil
	})
	if nbad == 0 {
		t.Fatal("found no shard files to tamper with")
	}

	// Two full epochs after funding: every good relay has answered and
	// claimed its rent; the bad one has missed and is flagged.
	start := mustHeight(t, c)
	ep := v.Rent.EpochBlocks
	waitFor(t, 90*time.Second, "rent paid to the good relays and the bad relay flagged", func() bool {
		for _, r := range relays[:5] {
			rel, err := c.Relays().Get(ctx, r.id)
			if err != nil || rel.Challenges == nil || rel.Challenges.Earned == "0" || rel.Challenges.Answered == 0 {
				return false
			}
		}
		rel, err := c.Relays().Get(ctx, bad.id)
		return err == nil && rel.Challenges != nil && rel.Challenges.Missed+rel.Challenges.Failed > 0 && !rel.Healthy &&
			mustHeight(t, c) > start+2*ep
	})
	v, err = c.Volumes().Get(ctx, vid)
	if err != nil {
		t.Fatal(err)
	}
	paid, _ := new(big.Int).SetString(v.Rent.Paid, 10)
	escrow, _ := new(big.Int).SetString(v.Rent.Escrow, 10)
	if paid.Sign() <= 0 || new(big.Int).Add(paid, escrow).Cmp(sdk.MustCBY("1")) > 0 {
		t.Fatalf("rent paid %s, escrow %s of 1 CBY funded", paid, escrow)
	}
	for _, r := range relays[:5] {
		rel, _ := c.Relays().Get(ctx, r.id)
		if rel.Challenges.Missed+rel.Challenges.Failed != 0 || !rel.Healthy {
			t.Fatalf("good relay %s: %+v healthy=%v", r.id, rel.Challenges, rel.Healthy)
		}
	}
	// (A new epoch's challenges are open for a moment: poll.)
	waitFor(t, 10*time.Second, "every relay's proof for the second volume", func() bool {
		v2, err := c.Volumes().Get(ctx, types.Hash(vol2.ID()))
		if err != nil || len(v2.Placement) != 6 {
			return false
		}
		for _, p := range v2.Placement {
			if p.Challenge == nil || (p.Challenge.Status != "answered" && p.Challenge.Status != "claimed") {
				return false
			}
		}
		return true
	})
	var rc *apitypes.RelayChallenges
	if rc, err = c.Relays().Challenges(ctx, bad.id); err != nil {
		t.Fatal(err)
	}
	missed := false
	for _, ch := range rc.Challenges {
		missed = missed || ch.Status == "missed" || ch.Status == "failed"
	}
	if !missed {
		t.Fatalf("bad relay's challenges: %+v", rc.Challenges)
	}
	// The operator sees it in `cowboy-relay status` (node taken from run.json).
	if out, err := exec.Command(relayBin, "status", "--home", bad.home).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "flagged true") || !strings.Contains(string(out), "UNHEALTHY") {
		t.Fatalf("status of the bad relay: %v\n%s", err, out)
	}
	if out, _ := exec.Command(relayBin, "status", "--home", relays[0].home).CombinedOutput(); !strings.Contains(string(out), "0 missed") {
		t.Fatalf("status of a good relay:\n%s", out)
	}
	t.Logf("after %d blocks: rent paid %s base units, escrow %s; bad relay %+v", mustHeight(t, c)-start, paid, escrow, rc.Challenges[len(rc.Challenges)-1])

	// The client's repair worker sees the flagged relay as unhealthy and
	// rebuilds its shards on a spare relay (every other relay already holds
	// a shard of each segment); the file reads back intact.
	spare := filepath.Join(root, "relay6")
	if out, err := exec.Command(relayBin, "init", "--home", spare, "--listen", "127.0.0.1:0").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	out, err := exec.Command(relayBin, "status", "--home", spare, "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ ID string }
	json.Unmarshal(out, &st)
	spareID, _ := types.ParseAddress(st.ID)
	fund(spareID, "200")
	startProc(t, relayBin, "run", "--home", spare, "--node", url, "--stake", "100", "--heartbeat", "500ms", "--challenge-poll", "200ms")
	waitFor(t, 30*time.Second, "the spare relay", func() bool { r, err := c.Relays().Get(ctx, spareID); return err == nil && r.Healthy })
	rep, err := vol.Repair(ctx, cbfs.RepairOptions{})
	if err != nil || rep.Repaired == 0 {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	var got bytes.Buffer
	if _, err := vol.Get(ctx, "/data.bin", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read back after repair: %v (%d bytes)", err, got.Len())
	}
}

// devnet is a --dev chain node and relay daemons registered on it.
type devnet struct {
	url    string
	root   string
	c      *sdk.Client
	relays []relayProc
}

// relayProc is one relay daemon of a devnet.
type relayProc struct {
	home string
	id   types.Address
	cmd  *exec.Cmd
}

// fund credits a from the devnet faucet and waits for it.
func (d *devnet) fund(t *testing.T, ctx context.Context) func(types.Address, string) {
	return func(a types.Address, cby string) {
		t.Helper()
		h, err := d.c.Chain().Faucet(ctx, a, sdk.MustCBY(cby))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.c.Chain().WaitForReceipt(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
}

// startDevnet runs a devnet node (100 ms blocks) and n relay daemons that
// register, heartbeat and answer challenges, with extra run flags, and
// waits until all n are healthy. Everything is killed when the test ends.
func startDevnet(t *testing.T, ctx context.Context, n int, relayArgs ...string) *devnet {
	t.Helper()
	cowboyd := buildCowboyd(t)
	root := t.TempDir()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	startProc(t, cowboyd, "--dev", "--home", filepath.Join(root, "node"), "--rpc", fmt.Sprintf("127.0.0.1:%d", port),
		"--block-interval", "100ms", "--log-level", "warn")
	d := &devnet{url: url, root: root, c: sdk.New(url)}
	c := d.c
	waitFor(t, 30*time.Second, "node up", func() bool { _, err := c.Chain().Status(ctx); return err == nil })
	fund := d.fund(t, ctx)
	for i := range n {
		home := filepath.Join(root, fmt.Sprintf("relay%d", i))
		if out, err := exec.Command(relayBin, "init", "--home", home, "--listen", "127.0.0.1:0").CombinedOutput(); err != nil {
			t.Fatalf("init: %v %s", err, out)
		}
		out, err := exec.Command(relayBin, "status", "--home", home, "--json").Output()
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ ID string }
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatal(err)
		}
		id, err := types.ParseAddress(st.ID)
		if err != nil {
			t.Fatal(err)
		}
		fund(id, "200")
		args := append([]string{"run", "--home", home, "--node", url, "--stake", "100", "--heartbeat", "500ms",
			"--challenge-poll", "200ms", "--log-level", "info"}, relayArgs...)
		cmd := startProc(t, relayBin, args...)
		d.relays = append(d.relays, relayProc{home, id, cmd})
	}
	waitFor(t, 60*time.Second, fmt.Sprintf("%d healthy relays", n), func() bool {
		rs, err := c.Relays().List(ctx)
		k := 0
		for _, r := range rs {
			if r.Healthy {
				k++
			}
		}
		return err == nil && k == n
	})
	return d
}

func mustHeight(t *testing.T, c *sdk.Client) uint64 {
	st, err := c.Chain().Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Height
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
