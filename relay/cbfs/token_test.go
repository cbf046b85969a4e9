package cbfs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// Tokens expiring while a volume is open: the owner's own tokens are
// renewed; a grantee's writes (and reads) fail with ErrTokenExpired, a clear
// error, and nothing committed before is lost.
func TestTokenExpiresWhileOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	anchor := &cbfs.MemAnchor{}
	oc, err := cbfs.New(cbfs.Config{Key: owner, Directory: cl.dir, Anchor: anchor, TokenTTL: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	vol, err := oc.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := crypto.GenerateKey()
	tok, err := vol.Grant(ctx, cbfs.GrantOptions{Grantee: &alice.PublicKey, Perms: captoken.PermAll, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	va, err := newClient(t, alice, cl.dir, anchor).OpenShared(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := va.Put(ctx, "/by-alice", strings.NewReader("before expiry")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3100 * time.Millisecond)
	if _, err := va.Put(ctx, "/late", strings.NewReader("after expiry")); !errors.Is(err, cbfs.ErrTokenExpired) {
		t.Fatalf("grantee write after expiry: %v", err)
	}
	// The owner's session renews its token: it keeps writing.
	if _, err := vol.Put(ctx, "/by-owner", strings.NewReader("after expiry")); err != nil {
		t.Fatalf("owner write after its first token expired: %v", err)
	}
	for _, p := range []string{"/by-alice", "/by-owner"} {
		if _, err := vol.Stat(ctx, p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
