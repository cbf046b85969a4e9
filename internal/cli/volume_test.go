package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// startRelays runs n real relay nodes (QUIC on loopback, bbolt stores) in
// process and registers each in the chain's Relay Registry.
func startRelays(t *testing.T, c *sdk.Client, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for i := 0; i < n; i++ {
		key, _ := crypto.GenerateKey()
		h, err := c.Chain().Faucet(ctx, types.PubkeyToAddress(key.PublicKey), genesis.CBY(1000))
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := c.Chain().WaitForReceipt(wctx, h); err != nil {
			t.Fatal(err)
		}
		wcancel()
		node, err := relay.New(relay.Config{Key: key, DataDir: t.TempDir(),
			Revocations: (&onchain.RevocationCache{Client: c, TTL: 10 * time.Millisecond}).For})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); node.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		<-node.Ready()
		var mu sync.Mutex
		reg := &onchain.Registrar{Client: c, Key: key, Addr: node.Addr().String(), Capacity: 1 << 30, Stake: genesis.CBY(100), Interval: time.Second,
			Logger: slog.New(slog.DiscardHandler), SendMu: &mu}
		if err := reg.Register(ctx); err != nil {
			t.Fatal(err)
		}
		go reg.Run(ctx)
		// Answer storage challenges and claim rent, as cowboy-relay run does.
		prover := &onchain.Prover{Client: c, Key: key, Holdings: node, Refusable: relay.IsRefusable, Interval: 50 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler), SendMu: &mu}
		go prover.Run(ctx)
	}
}

func TestVolumeCommands(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	startRelays(t, c, 6)
	t.Setenv("COWBOY_PASSWORD", "pw")
	h := &harness{t: t, url: srv.URL, home: t.TempDir()}
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")

	if out := h.must("relay", "list"); strings.Count(out, "healthy") != 6 {
		t.Fatalf("relay list: %s", out)
	}
	if out := h.must("volume", "create", "photos", "--k", "4", "--m", "2"); !strings.Contains(out, "Volume photos created") {
		t.Fatalf("create: %s", out)
	}
	data := make([]byte, 5<<20+123)
	rand.Read(data)
	local := filepath.Join(t.TempDir(), "big.bin")
	os.WriteFile(local, data, 0o644)
	if out := h.must("volume", "put", "photos", local, "dir/big.bin"); !strings.Contains(out, "dir/big.bin") {
		t.Fatalf("put: %s", out)
	}
	back := filepath.Join(t.TempDir(), "back.bin")
	h.must("volume", "get", "photos", "dir/big.bin", back)
	if got, _ := os.ReadFile(back); !bytes.Equal(got, data) {
		t.Fatal("downloaded bytes differ")
	}
	if out := h.must("volume", "ls", "photos", "dir/"); !strings.Contains(out, "dir/big.bin") {
		t.Fatalf("ls: %s", out)
	}
	info := h.must("volume", "info", "photos")
	if !strings.Contains(info, "K=4 data + M=2 parity") || strings.Count(info, "shards  healthy") != 6 {
		t.Fatalf("info: %s", info)
	}
	// The on-chain commitment tracks the manifest version.
	if !strings.Contains(info, "On chain      version 2") {
		t.Fatalf("commitment: %s", info)
	}
	// Rent: fund the escrow; the relays answer the next epoch's challenges
	// and claim their rent, which info and relay status show.
	if _, err := h.run("", "volume", "fund", "photos", "0"); err == nil {
		t.Fatal("funding with 0 accepted")
	}
	if out := h.must("volume", "fund", "photos", "1"); !strings.Contains(out, "with 1 CBY; escrow 0.9") && !strings.Contains(out, "escrow 1 CBY") {
		t.Fatalf("fund: %s", out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info = h.must("volume", "info", "photos")
		if strings.Count(info, "challenge claimed") == 6 || (strings.Count(info, "challenge answered")+strings.Count(info, "challenge claimed") == 6 && strings.Contains(info, "paid        0.0")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("challenges not answered and paid: %s", info)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(info, "per epoch") || !strings.Contains(info, "escrow      0.99") {
		t.Fatalf("rent in info: %s", info)
	}
	rs, err := c.Relays().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st := h.must("relay", "status", rs[0].ID.String()); !strings.Contains(st, "Challenges") || !strings.Contains(st, "Earnings") || !strings.Contains(st, "answered") {
		t.Fatalf("relay status: %s", st)
	}

	// Grant bob read access; he reads with --token, cannot write.
	h.must("keys", "new", "bob", "--light-kdf")
	h.must("faucet", "bob", "--value", "1")
	bobPub := strings.TrimSpace(h.must("keys", "show", "bob", "--pubkey"))
	tok := strings.TrimSpace(h.must("volume", "grant", "photos", "--from", "alice", "--to", bobPub, "--perms", "r", "--expires", "1h"))
	shared := filepath.Join(t.TempDir(), "shared.bin")
	h.must("volume", "get", "photos", "dir/big.bin", shared, "--from", "bob", "--token", tok)
	if got, _ := os.ReadFile(shared); !bytes.Equal(got, data) {
		t.Fatal("bob read different bytes")
	}
	if _, err := h.run("", "volume", "put", "photos", local, "x.bin", "--from", "bob", "--token", tok); err == nil {
		t.Fatal("read-only token allowed a write")
	}
	// A token for bob is useless to alice.
	if _, err := h.run("", "volume", "ls", "photos", "--from", "alice", "--token", tok); err == nil {
		t.Fatal("token used by someone other than its grantee")
	}
	// Revoked on chain: relays refuse bob's token from then on.
	h.must("volume", "revoke", "photos", tok, "--from", "alice")
	time.Sleep(50 * time.Millisecond)
	if _, err := h.run("", "volume", "get", "photos", "dir/big.bin", shared, "--from", "bob", "--token", tok); err == nil {
		t.Fatal("revoked token still reads")
	}
	h.must("volume", "rm", "photos", "dir/big.bin", "--from", "alice")
	if out := h.must("volume", "ls", "photos", "--from", "alice"); strings.Contains(out, "big.bin") {
		t.Fatalf("file still listed after rm: %s", out)
	}
}
