package cbfs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

func TestFileAnchor(t *testing.T) {
	ctx := context.Background()
	a := &FileAnchor{Path: filepath.Join(t.TempDir(), "anchor.json")}
	vol := VolumeID{9}
	if _, _, err := a.LatestManifest(ctx, vol); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty: %v", err)
	}
	if err := a.CommitManifest(ctx, vol, [32]byte{1}, 2); !errors.Is(err, ErrConflict) {
		t.Fatalf("gap: %v", err)
	}
	for v := uint64(1); v <= 2; v++ {
		if err := a.CommitManifest(ctx, vol, [32]byte{byte(v)}, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.CommitManifest(ctx, vol, [32]byte{7}, 2); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale: %v", err)
	}
	// A second instance (another process) sees the same state.
	b := &FileAnchor{Path: a.Path}
	root, ver, err := b.LatestManifest(ctx, vol)
	if err != nil || ver != 2 || root != ([32]byte{2}) {
		t.Fatalf("latest: %v %d %x", err, ver, root)
	}
}

func TestStaticDirectory(t *testing.T) {
	k, _ := crypto.GenerateKey()
	good := RelayInfo{ID: RelayID(crypto.PubkeyToAddress(k.PublicKey)), Addr: "127.0.0.1:1", PubKey: crypto.CompressPubkey(&k.PublicKey), Healthy: true}
	p := filepath.Join(t.TempDir(), "relays.json")
	if err := WriteDirectoryFile(p, []RelayInfo{good}); err != nil {
		t.Fatal(err)
	}
	got, err := StaticDirectory{Path: p}.Relays(context.Background())
	if err != nil || len(got) != 1 || got[0].ID != good.ID || string(got[0].PubKey) != string(good.PubKey) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	bad := good
	bad.ID[0] ^= 1
	WriteDirectoryFile(p, []RelayInfo{bad})
	if _, err := (StaticDirectory{Path: p}).Relays(context.Background()); err == nil {
		t.Fatal("relay id not matching its key accepted")
	}
}
