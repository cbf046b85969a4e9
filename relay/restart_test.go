package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestRestartOnSameAddress closes a relay that a client is connected to
// and at once starts a new one on the same UDP address, with no retry:
// Close must have released the socket before it returned. Before the fix
// the listener's socket was closed in the background once quic-go's
// connections had drained, and the restart failed with "address already
// in use".
func TestRestartOnSameAddress(t *testing.T) {
	h := newHarness(t, 1<<20)
	addr := h.node.Addr().String()
	tok := h.token(captoken.Caveats{Perms: captoken.PermAll})
	if resp, _ := h.send(&wire.Request{Op: wire.OpList}, tok, nil); resp.Status != wire.StatusOK {
		t.Fatalf("stat: %+v", resp)
	}
	if err := h.node.Close(); err != nil {
		t.Fatal(err)
	}
	key, _ := crypto.GenerateKey()
	node, err := relay.New(relay.Config{Key: key, DataDir: t.TempDir(), Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	stopped := make(chan struct{})
	go func() { defer close(stopped); runErr = node.Run(context.Background()) }()
	t.Cleanup(func() { node.Close(); <-stopped })
	select {
	case <-node.Ready():
	case <-stopped:
		t.Fatalf("restart on %s right after Close: %v", addr, runErr)
	case <-time.After(30 * time.Second):
		t.Fatal("the restarted relay neither listened nor failed")
	}
	// The new relay serves on the old address.
	h.node = node
	if resp, _ := h.send(&wire.Request{Op: wire.OpList}, tok, nil); resp.Status != wire.StatusOK {
		t.Fatalf("stat after restart: %+v", resp)
	}
}
