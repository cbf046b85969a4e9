package relay_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// relayHead asks one relay for the volume's head and its whole log, and
// returns the head's version and the version of the last log entry.
func relayHead(t *testing.T, ctx context.Context, pool *transport.Pool, owner *ecdsa.PrivateKey, vol captoken.VolumeID, p *proc) (version, logged uint64) {
	t.Helper()
	tok, err := captoken.Issue(owner, vol, captoken.Caveats{Perms: captoken.PermAll,
		Expiry: time.Now().Add(time.Hour).Unix(), Grantee: crypto.CompressPubkey(&owner.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	do := func(req *wire.Request) (*wire.Response, []byte) {
		req.Volume, req.Relay, req.Time, req.Token = vol, [20]byte(p.info.ID), time.Now().Unix(), tok.Encode()
		rand.Read(req.Nonce[:])
		req.Sig, _ = captoken.SignRequest(owner, req.SigningHash())
		reply, err := pool.Do(ctx, p.info.Addr, p.info.PubKey, req, nil)
		if err != nil {
			t.Fatalf("relay %s %s: %v", p.info.ID, req.Op, err)
		}
		defer reply.Close()
		b, _ := io.ReadAll(reply.Body)
		return &reply.Response, b
	}
	resp, _ := do(&wire.Request{Op: wire.OpHead})
	if resp.Status != wire.StatusOK {
		t.Fatalf("relay %s head: %+v", p.info.ID, resp)
	}
	h, err := wire.DecodeHead(resp.Head)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := do(&wire.Request{Op: wire.OpLog, Offset: 1})
	if resp.Status != wire.StatusOK {
		t.Fatalf("relay %s log: %+v", p.info.ID, resp)
	}
	var ents []wire.LogEntry
	if err := wire.Unmarshal(body, &ents); err != nil {
		t.Fatal(err)
	}
	if len(ents) == 0 {
		return h.Version, 0
	}
	last, err := wire.DecodeHead(ents[len(ents)-1].Head)
	if err != nil {
		t.Fatal(err)
	}
	return h.Version, last.Version
}

// TestHeadsSurviveKill9: every relay process is killed with SIGKILL right
// after the commits it acknowledged, while those heads are still only in
// its head log (heads.log, not yet in the bbolt index); after a restart each
// relay serves the head it had acknowledged and the full log up to it, and
// a fresh client reads every file.
func TestHeadsSurviveKill9(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := startCluster(t, 6)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, e, cbfs.Config{Key: owner})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const files = 30
	for i := range files {
		if _, err := vol.Put(ctx, fmt.Sprintf("/f/%d", i), &patterned{n: 700, seed: byte(i)}); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	pool := transport.NewPool()
	t.Cleanup(func() { pool.Close() })
	before := make([]uint64, len(e.procs))
	for i, p := range e.procs {
		before[i], _ = relayHead(t, ctx, pool, owner, vol.ID(), p)
	}
	for _, p := range e.procs {
		p.kill9()
	}
	inLog := 0
	for _, p := range e.procs {
		if st, err := os.Stat(filepath.Join(p.home, "data", "heads.log")); err == nil && st.Size() > 0 {
			inLog++
		}
	}
	if inLog == 0 {
		t.Fatal("no relay had heads in its head log at the kill: the test does not exercise recovery")
	}
	pool.Close()
	pool = transport.NewPool()
	for i := range e.procs {
		e.restart(i)
	}
	majority := 0
	for i, p := range e.procs {
		v, logged := relayHead(t, ctx, pool, owner, vol.ID(), p)
		if v < before[i] {
			t.Errorf("relay %d served v%d before the kill, v%d after the restart", i, before[i], v)
		}
		if logged != v {
			t.Errorf("relay %d: log ends at v%d, head is v%d", i, logged, v)
		}
		if v == maxOf(before) {
			majority++
		}
	}
	if majority < 4 {
		t.Errorf("only %d of 6 relays hold the last head v%d after the restart", majority, maxOf(before))
	}
	c2 := newClient(t, e, cbfs.Config{Key: owner})
	v2, err := c2.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		checkFile(t, ctx, v2, fmt.Sprintf("/f/%d", i), 700, byte(i))
	}
}

func maxOf(vs []uint64) uint64 {
	var m uint64
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}
