package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// relayBinary builds cowboy-relay into binDir once.
func relayBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "cowboy-relay")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cowboy-foundation/cowboy/cmd/cowboy-relay")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cowboy-relay: %v\n%s", err, out)
	}
	return bin
}

// TestRelaysOnFullNode: three cowboy-relay daemons pointed at a full node
// stake, register and heartbeat through it; a 2+1 volume stored with the
// full node as the chain (relay directory, anchoring) is read back by a
// fresh client. Relays work unchanged against a full node.
func TestRelaysOnFullNode(t *testing.T) {
	full := oneValidatorAndFullNode(t)
	bin := relayBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := full.client()
	fund := func(a types.Address, cby string) {
		t.Helper()
		h, err := c.Chain().Faucet(ctx, a, sdk.MustCBY(cby))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	const n = 3
	for i := range n {
		home := t.TempDir()
		if out, err := exec.Command(bin, "init", "--home", home, "--listen", "127.0.0.1:0").CombinedOutput(); err != nil {
			t.Fatalf("relay init: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "status", "--home", home, "--json").Output()
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
		logBuf := &syncBuf{}
		cmd := exec.Command(bin, "run", "--home", home, "--node", full.url(), "--stake", "100", "--heartbeat", "500ms",
			"--challenge-poll", "200ms", "--log-level", "info")
		cmd.Stdout, cmd.Stderr = logBuf, logBuf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			if t.Failed() {
				t.Logf("relay %d log:\n%s", i, tailLines(logBuf.String(), 20))
			}
		})
	}
	for {
		rs, err := c.Relays().List(ctx)
		healthy := 0
		for _, r := range rs {
			if r.Healthy {
				healthy++
			}
		}
		if err == nil && healthy == n {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d relays healthy through the full node (%v)", healthy, n, err)
		case <-time.After(100 * time.Millisecond):
		}
	}

	owner, _ := crypto.GenerateKey()
	fund(types.PubkeyToAddress(owner.PublicKey), "100")
	client := func() *cbfs.Client {
		cc, err := cbfs.New(cbfs.Config{Key: owner, Directory: onchain.Directory{Client: c},
			Anchor: &onchain.Anchor{Client: c, Key: owner, K: 2, M: 1}, RequestTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
	vol, err := client().CreateVolume(ctx, cbfs.VolumeOptions{K: 2, M: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("cowboy full node "), 4096)
	if _, err := vol.Put(ctx, "/f.bin", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := vol.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := client().OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := again.Get(ctx, "/f.bin", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read back %d bytes (want %d): %v", got.Len(), len(data), err)
	}
	if v, err := c.Volumes().Get(ctx, types.Hash(vol.ID())); err != nil || len(v.Placement) != n {
		t.Fatalf("volume on chain through the full node: %+v %v", v, err)
	}
}
