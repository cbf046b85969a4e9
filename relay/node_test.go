package relay_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

type harness struct {
	t     *testing.T
	node  *relay.Node
	pool  *transport.Pool
	owner *ecdsa.PrivateKey
	vol   captoken.VolumeID
	dir   string
}

func newHarness(t *testing.T, capacity uint64, rl ...captoken.RevocationList) *harness {
	key, _ := crypto.GenerateKey()
	dir := t.TempDir()
	cfg := relay.Config{Key: key, DataDir: dir, Capacity: capacity, Metrics: "127.0.0.1:0"}
	if len(rl) > 0 {
		cfg.Revocations = func(captoken.VolumeID) captoken.RevocationList { return rl[0] }
	}
	node, err := relay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(context.Background()) }()
	<-node.Ready()
	owner, _ := crypto.GenerateKey()
	h := &harness{t: t, node: node, dir: dir, pool: transport.NewPool(), owner: owner,
		vol: captoken.NewVolumeID(crypto.PubkeyToAddress(owner.PublicKey), [12]byte{1})}
	t.Cleanup(func() {
		h.pool.Close()
		node.Close()
		<-done
	})
	return h
}

func (h *harness) token(c captoken.Caveats) *captoken.Token {
	if c.Expiry == 0 {
		c.Expiry = time.Now().Add(time.Hour).Unix()
	}
	if c.Grantee == nil {
		c.Grantee = crypto.CompressPubkey(&h.owner.PublicKey)
	}
	tok, err := captoken.Issue(h.owner, h.vol, c)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// signed signs req with the owner key (unless already signed).
func (h *harness) signed(req *wire.Request, tok *captoken.Token) *wire.Request {
	if req.Sig == nil {
		req.Volume = h.vol
		if req.Relay == ([20]byte{}) {
			req.Relay = h.node.ID()
		}
		if req.Time == 0 {
			req.Time = time.Now().Unix()
		}
		if req.Nonce == ([16]byte{}) {
			rand.Read(req.Nonce[:])
		}
		req.Token = tok.Encode()
		req.Sig, _ = captoken.SignRequest(h.owner, req.SigningHash())
	}
	return req
}

// send signs req with the owner key (unless already signed) and returns the reply.
func (h *harness) send(req *wire.Request, tok *captoken.Token, body []byte) (*wire.Response, []byte) {
	h.t.Helper()
	req = h.signed(req, tok)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := h.pool.Do(ctx, h.node.Addr().String(), h.node.PubKey(), req, bytes.NewReader(body))
	if err != nil {
		h.t.Fatalf("%s: %v", req.Op, err)
	}
	defer reply.Close()
	b, _ := io.ReadAll(reply.Body)
	return &reply.Response, b
}

func TestNodeProtocol(t *testing.T) {
	h := newHarness(t, 64<<10)
	all := h.token(captoken.Caveats{Perms: captoken.PermAll})
	data := bytes.Repeat([]byte("0123456789"), 5000) // 50 KB
	id := [32]byte{7}
	put := &wire.Request{Op: wire.OpPut, ID: id, Hash: merkle.Sum(data), Size: uint64(len(data))}
	if r, _ := h.send(put, all, data); r.Status != wire.StatusOK {
		t.Fatalf("put: %s %s", r.Status, r.Error)
	}
	// Replaying the exact signed request is refused.
	if r, _ := h.send(put, all, data); r.Status != wire.StatusUnauthorized || !strings.Contains(r.Error, "replay") {
		t.Fatalf("replay: %s %s", r.Status, r.Error)
	}
	r, body := h.send(&wire.Request{Op: wire.OpGet, ID: id, Offset: 10, Length: 5}, all, nil)
	if r.Status != wire.StatusOK || string(body) != "01234" {
		t.Fatalf("ranged get: %s %q", r.Status, body)
	}
	r, _ = h.send(&wire.Request{Op: wire.OpChallenge, ID: id, Offset: 3000, Length: 2000}, all, nil)
	if r.Status != wire.StatusOK || r.Challenge.Verify(merkle.Sum(data), 3000, 2000) != nil {
		t.Fatalf("challenge: %s %s", r.Status, r.Error)
	}
	r, _ = h.send(&wire.Request{Op: wire.OpHas, ID: id}, all, nil)
	if !r.Exists {
		t.Fatal("has")
	}
	r, _ = h.send(&wire.Request{Op: wire.OpList}, all, nil)
	if len(r.Objects) != 1 || r.Objects[0].ID != id {
		t.Fatalf("list %+v", r.Objects)
	}
	// Relay full: a clear status, even though the body was refused.
	big := make([]byte, 40<<10)
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, ID: [32]byte{8}, Hash: merkle.Sum(big), Size: uint64(len(big))}, all, big); r.Status != wire.StatusFull {
		t.Fatalf("full: %s %s", r.Status, r.Error)
	}
	// Hash mismatch.
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, ID: [32]byte{9}, Hash: [32]byte{1}, Size: 3}, all, []byte("abc")); r.Status != wire.StatusBadRequest {
		t.Fatalf("bad hash: %s", r.Status)
	}
	// Addressed to another relay, stale, wrong permission, prefix token
	// replacing the manifest.
	if r, _ := h.send(&wire.Request{Op: wire.OpHas, ID: id, Relay: [20]byte{1}}, all, nil); r.Status != wire.StatusUnauthorized {
		t.Fatalf("other relay: %s", r.Status)
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpHas, ID: id, Time: time.Now().Add(-time.Hour).Unix()}, all, nil); r.Status != wire.StatusUnauthorized {
		t.Fatalf("stale: %s", r.Status)
	}
	ro := h.token(captoken.Caveats{Perms: captoken.PermRead})
	if r, _ := h.send(&wire.Request{Op: wire.OpDelete, ID: id}, ro, nil); r.Status != wire.StatusUnauthorized {
		t.Fatalf("delete with read token: %s", r.Status)
	}
	pre := h.token(captoken.Caveats{Perms: captoken.PermAll, Prefix: "/sub"})
	m := []byte("manifest")
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindManifest, ID: [32]byte{10}, Hash: merkle.Sum(m), Size: uint64(len(m))}, pre, m); r.Status != wire.StatusUnauthorized {
		t.Fatalf("prefix token manifest put: %s", r.Status)
	}
	// Pending entries: the id must derive from the token's prefix.
	suffix := bytes.Repeat([]byte{5}, 32)
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindPending, ID: wire.PendingID("/other", suffix), Suffix: suffix,
		Hash: merkle.Sum(m), Size: uint64(len(m))}, pre, m); r.Status != wire.StatusUnauthorized {
		t.Fatalf("pending id for another prefix: %s", r.Status)
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpPut, Kind: wire.KindPending, ID: wire.PendingID("/sub", suffix), Suffix: suffix,
		Hash: merkle.Sum(m), Size: uint64(len(m))}, pre, m); r.Status != wire.StatusOK {
		t.Fatalf("pending id for own prefix: %s %s", r.Status, r.Error)
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpList, Kind: wire.KindPending}, pre, nil); r.Status != wire.StatusUnauthorized {
		t.Fatalf("prefix token listing pending: %s", r.Status)
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpList, Kind: wire.KindPending}, all, nil); r.Status != wire.StatusOK || len(r.Objects) != 1 {
		t.Fatalf("list pending: %s %d", r.Status, len(r.Objects))
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpDelete, ID: id}, all, nil); r.Status != wire.StatusOK {
		t.Fatalf("delete: %s", r.Status)
	}
	if r, _ := h.send(&wire.Request{Op: wire.OpGet, ID: id}, all, nil); r.Status != wire.StatusNotFound {
		t.Fatalf("get deleted: %s", r.Status)
	}
	// Metrics.
	resp, err := http.Get("http://" + h.node.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`cbfs_relay_requests_total{op="put",status="relay full"} 1`, "cbfs_relay_auth_failures_total", "cbfs_relay_used_bytes"} {
		if !strings.Contains(string(mb), want) {
			t.Fatalf("metrics missing %q", want)
		}
	}
	// Shutdown is idempotent.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.node.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.node.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.node.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownDrainsInFlight(t *testing.T) {
	h := newHarness(t, 0)
	tok := h.token(captoken.Caveats{Perms: captoken.PermAll})
	data := bytes.Repeat([]byte{1}, 300<<10)
	pr, pw := io.Pipe()
	req := &wire.Request{Op: wire.OpPut, ID: [32]byte{1}, Hash: merkle.Sum(data), Size: uint64(len(data)),
		Volume: h.vol, Relay: h.node.ID(), Time: time.Now().Unix(), Token: tok.Encode()}
	rand.Read(req.Nonce[:])
	req.Sig, _ = captoken.SignRequest(h.owner, req.SigningHash())
	type res struct {
		st  wire.Status
		err error
	}
	out := make(chan res, 1)
	go func() {
		reply, err := h.pool.Do(context.Background(), h.node.Addr().String(), h.node.PubKey(), req, pr)
		if err != nil {
			out <- res{err: err}
			return
		}
		reply.Close()
		out <- res{st: reply.Status}
	}()
	pw.Write(data[:100<<10])
	time.Sleep(100 * time.Millisecond) // the request is being served
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- h.node.Shutdown(ctx)
	}()
	time.Sleep(100 * time.Millisecond)
	pw.Write(data[100<<10:])
	pw.Close()
	if r := <-out; r.err != nil || r.st != wire.StatusOK {
		t.Fatalf("in-flight put during shutdown: %v %s", r.err, r.st)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if used, objs, err := relay.DiskUsage(h.dir); err != nil || objs != 1 || used != uint64(len(data)) {
		t.Fatalf("acknowledged object missing after shutdown: %v %d %d", err, objs, used)
	}
}

func TestRevocationHook(t *testing.T) {
	revoked := captoken.NewMemoryRevocations()
	h := newHarness(t, 0, revoked)
	tok := h.token(captoken.Caveats{Perms: captoken.PermAll})
	if r, _ := h.send(&wire.Request{Op: wire.OpList}, tok, nil); r.Status != wire.StatusOK {
		t.Fatalf("before revocation: %s", r.Status)
	}
	revoked.Revoke(tok.ID())
	if r, _ := h.send(&wire.Request{Op: wire.OpList}, tok, nil); r.Status != wire.StatusUnauthorized {
		t.Fatalf("after revocation: %s", r.Status)
	}
}
