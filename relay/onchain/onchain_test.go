package onchain

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

func fund(t *testing.T, c *sdk.Client, a types.Address) {
	t.Helper()
	h, err := c.Chain().Faucet(context.Background(), a, genesis.CBY(1000))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryDirectoryAnchor(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	relayKey, _ := crypto.GenerateKey()
	fund(t, c, types.PubkeyToAddress(relayKey.PublicKey))
	reg := &Registrar{Client: c, Key: relayKey, Addr: "127.0.0.1:7443", Capacity: 1 << 30, Stake: genesis.CBY(100), Interval: 50 * time.Millisecond, Used: func() uint64 { return 42 }}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- reg.Run(rctx) }()
	var relays []cbfs.RelayInfo
	for {
		var err error
		relays, err = Directory{Client: c}.Relays(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(relays) == 1 && relays[0].Used == 42 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("relay never registered and heartbeat: %+v", relays)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if err := relays[0].Validate(); err != nil || !relays[0].Healthy || relays[0].Addr != "127.0.0.1:7443" {
		t.Fatalf("relay %+v: %v", relays[0], err)
	}

	owner, _ := crypto.GenerateKey()
	fund(t, c, types.PubkeyToAddress(owner.PublicKey))
	vol := captoken.NewVolumeID(common.Address(types.PubkeyToAddress(owner.PublicKey)), [12]byte{1})
	a := &Anchor{Client: c, Key: owner}
	if _, _, err := a.LatestManifest(ctx, vol); !errors.Is(err, cbfs.ErrNotFound) {
		t.Fatalf("unknown volume: %v", err)
	}
	if err := a.CreateVolume(ctx, vol, 4, 2); err != nil {
		t.Fatal(err)
	}
	root := [32]byte{0xaa}
	if err := a.CommitManifest(ctx, vol, root, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.CommitManifest(ctx, vol, root, 1); !errors.Is(err, cbfs.ErrConflict) {
		t.Fatalf("stale version: %v", err)
	}
	got, v, err := a.LatestManifest(ctx, vol)
	if err != nil || got != root || v != 1 {
		t.Fatalf("latest: %x %d %v", got, v, err)
	}
	rl := Revocations{Client: c, Volume: vol}
	if r, err := rl.Revoked(ctx, [32]byte{5}); err != nil || r {
		t.Fatalf("revoked before: %v %v", r, err)
	}
	if err := a.RevokeToken(ctx, vol, [32]byte{5}); err != nil {
		t.Fatal(err)
	}
	if r, err := rl.Revoked(ctx, [32]byte{5}); err != nil || !r {
		t.Fatalf("revoked after: %v %v", r, err)
	}
}
