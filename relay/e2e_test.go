package relay_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

var relayBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cowboy-relay-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	relayBin = filepath.Join(dir, "cowboy-relay")
	out, err := exec.Command("go", "build", "-o", relayBin, "github.com/cowboy-foundation/cowboy/cmd/cowboy-relay").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build cowboy-relay: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one relay process.
type proc struct {
	home string
	cmd  *exec.Cmd
	done chan struct{}
	info cbfs.RelayInfo
}

func (p *proc) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func startRelay(t testing.TB, home string) *proc {
	t.Helper()
	if _, err := os.Stat(filepath.Join(home, "node.key")); err != nil {
		if out, err := exec.Command(relayBin, "init", "--home", home, "--listen", "127.0.0.1:0").CombinedOutput(); err != nil {
			t.Fatalf("init: %v %s", err, out)
		}
	}
	os.Remove(filepath.Join(home, "run.json"))
	cmd := exec.Command(relayBin, "run", "--home", home, "--log-level", "warn")
	logBuf := &syncBuf{}
	cmd.Stderr = logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{home: home, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			logBuf.mu.Lock()
			t.Logf("relay %s log:\n%s", filepath.Base(home), logBuf.b.String())
			logBuf.mu.Unlock()
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(home, "run.json"))
		if err == nil {
			var ri struct{ ID, PubKey, Addr string }
			if err := json.Unmarshal(b, &ri); err != nil {
				t.Fatal(err)
			}
			var id cbfs.RelayID
			if err := id.UnmarshalText([]byte(ri.ID)); err != nil {
				t.Fatal(err)
			}
			pub, _ := hex.DecodeString(ri.PubKey)
			p.info = cbfs.RelayInfo{ID: id, Addr: ri.Addr, PubKey: pub, Healthy: true}
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("relay exited early")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("relay did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type e2e struct {
	t       testing.TB // top-level test: owns every process
	procs   []*proc
	dirPath string
	anchor  *cbfs.FileAnchor
}

func startCluster(t testing.TB, n int) *e2e {
	t.Helper()
	root := t.TempDir()
	e := &e2e{t: t, dirPath: filepath.Join(root, "relays.json"), anchor: &cbfs.FileAnchor{Path: filepath.Join(root, "anchor.json")}}
	procs := make([]*proc, n)
	for i := range n {
		procs[i] = startRelay(t, filepath.Join(root, fmt.Sprintf("relay%d", i)))
	}
	e.procs = procs
	e.writeDir()
	return e
}

// restart starts relay i again (same home) and updates the directory.
func (e *e2e) restart(i int) {
	e.procs[i] = startRelay(e.t, e.procs[i].home)
	e.writeDir()
}

func (e *e2e) writeDir() {
	var infos []cbfs.RelayInfo
	for _, p := range e.procs {
		infos = append(infos, p.info)
	}
	cbfs.WriteDirectoryFile(e.dirPath, infos)
}

func newClient(t testing.TB, e *e2e, cfg cbfs.Config) *cbfs.Client {
	t.Helper()
	cfg.Directory = cbfs.StaticDirectory{Path: e.dirPath}
	cfg.Anchor = e.anchor
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 20 * time.Second
	}
	c, err := cbfs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// patterned is a deterministic pseudo-random reader (cheap to regenerate).
type patterned struct {
	n, off int64
	seed   byte
}

func (p *patterned) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(b)), p.n-p.off))
	for i := 0; i < k; i++ {
		x := uint64(p.off+int64(i)) * 0x9e3779b97f4a7c15
		b[i] = byte(x>>56) ^ p.seed
	}
	p.off += int64(k)
	return k, nil
}

type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func digest(r io.Reader) [32]byte {
	h := sha256.New()
	io.Copy(h, r)
	return [32]byte(h.Sum(nil))
}

func roundTrip(t *testing.T, ctx context.Context, v *cbfs.Volume, path string, size int64, seed byte) {
	t.Helper()
	start := time.Now()
	if _, err := v.Put(ctx, path, &patterned{n: size, seed: seed}); err != nil {
		t.Fatalf("put %s (%d bytes): %v", path, size, err)
	}
	put := time.Since(start)
	checkFile(t, ctx, v, path, size, seed)
	if size >= 1<<20 {
		t.Logf("%s: %d MiB put %v, put+get %v", path, size>>20, put, time.Since(start))
	}
}

func checkFile(t *testing.T, ctx context.Context, v *cbfs.Volume, path string, size int64, seed byte) {
	t.Helper()
	h := sha256.New()
	fi, err := v.Get(ctx, path, h)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	if fi.Size != size || [32]byte(h.Sum(nil)) != digest(&patterned{n: size, seed: seed}) {
		t.Fatalf("get %s: content mismatch", path)
	}
}

func TestE2E(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e := startCluster(t, 6)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, e, cbfs.Config{Key: owner})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seg := int64(cbfs.DefaultSegmentSize)
	sizes := []int64{0, 1, seg - 1, seg, seg + 1, 2 * seg, 64 << 20}
	for i, n := range sizes {
		roundTrip(t, ctx, vol, fmt.Sprintf("/sizes/%d", n), n, byte(i))
	}

	t.Run("status of a running relay", func(t *testing.T) {
		// status works against a running relay
		out, err := exec.Command(relayBin, "status", "--home", e.procs[5].home, "--json").Output()
		if err != nil || !strings.Contains(string(out), `"running": true`) {
			t.Fatalf("status: %v %s", err, out)
		}
	})

	t.Run("kill -9 two relays, read intact", func(t *testing.T) {
		e.procs[1].kill9()
		e.procs[4].kill9()
		c2 := newClient(t, e, cbfs.Config{Key: owner})
		v2, err := c2.OpenVolume(ctx, vol.ID())
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range sizes {
			checkFile(t, ctx, v2, fmt.Sprintf("/sizes/%d", n), n, byte(i))
		}
		// Restart them: acknowledged shards survived kill -9.
		e.restart(1)
		e.restart(4)
		m, _ := v2.Manifest(ctx)
		for _, p := range []*proc{e.procs[1], e.procs[4]} {
			held := 0
			for _, f := range m.Files {
				for _, s := range f.Segments {
					for _, sh := range s.Shards {
						if sh.Relay == p.info.ID {
							held++
						}
					}
				}
			}
			out, _ := exec.Command(relayBin, "status", "--home", p.home, "--json").Output()
			var st struct{ Objects int }
			json.Unmarshal(out, &st)
			// objects = shards + manifest copies
			if st.Objects < held {
				t.Fatalf("relay %s holds %d objects after kill -9, manifest places %d shards there", p.info.ID, st.Objects, held)
			}
		}
	})

	t.Run("tampered shard detected, read ok, repair restores", func(t *testing.T) {
		m, _ := vol.Manifest(ctx)
		i := m.Lookup(fmt.Sprintf("/sizes/%d", seg+1))
		sh := m.Files[i].Segments[0].Shards[0]
		var victim *proc
		for _, p := range e.procs {
			if p.info.ID == sh.Relay {
				victim = p
			}
		}
		vid := vol.ID()
		key := hex.EncodeToString(append(vid[:], sh.ID[:]...))
		path := filepath.Join(victim.home, "data", "objects", key[:4], key)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x55
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var faults []cbfs.ShardFault
		var mu sync.Mutex
		c3 := newClient(t, e, cbfs.Config{Key: owner, OnShardFailure: func(f cbfs.ShardFault) {
			mu.Lock()
			faults = append(faults, f)
			mu.Unlock()
		}})
		v3, err := c3.OpenVolume(ctx, vol.ID())
		if err != nil {
			t.Fatal(err)
		}
		checkFile(t, ctx, v3, fmt.Sprintf("/sizes/%d", seg+1), seg+1, 4)
		mu.Lock()
		found := false
		for _, f := range faults {
			if f.Shard.ID == sh.ID && errors.Is(f.Err, cbfs.ErrIntegrity) {
				found = true
			}
		}
		mu.Unlock()
		if !found {
			t.Fatalf("tampered shard not reported: %v", faults)
		}
		rep, err := v3.Repair(ctx, cbfs.RepairOptions{Suspects: faults})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Repaired < 1 {
			t.Fatalf("repair: %+v", rep)
		}
		// With 6 relays and 4+2 there is no spare: the shard is rewritten
		// in place; the on-disk copy must be intact again.
		m2, _ := v3.Manifest(ctx)
		if m2.Files[i].Segments[0].Shards[0].Relay == victim.info.ID {
			if nb, err := os.ReadFile(path); err != nil || bytes.Equal(nb, b) {
				t.Fatalf("tampered copy still on disk: %v", err)
			}
		}
		rep, err = v3.Repair(ctx, cbfs.RepairOptions{Audit: true})
		if err != nil || rep.Bad != 0 {
			t.Fatalf("audit after repair: %+v %v", rep, err)
		}
		checkFile(t, ctx, v3, fmt.Sprintf("/sizes/%d", seg+1), seg+1, 4)
	})

	t.Run("expired and forged tokens refused by relays", func(t *testing.T) {
		m, _ := vol.Manifest(ctx)
		sh := m.Files[m.Lookup(fmt.Sprintf("/sizes/%d", seg-1))].Segments[0].Shards[0]
		var target cbfs.RelayInfo
		for _, p := range e.procs {
			if p.info.ID == sh.Relay {
				target = p.info
			}
		}
		pool := transport.NewPool()
		defer pool.Close()
		holder, _ := crypto.GenerateKey()
		mallory, _ := crypto.GenerateKey()
		get := func(tok *captoken.Token, signer any) wire.Status {
			req := &wire.Request{Op: wire.OpGet, Volume: vol.ID(), ID: sh.ID, Relay: target.ID, Time: time.Now().Unix(), Token: tok.Encode()}
			rand.Read(req.Nonce[:])
			k := holder
			if signer != nil {
				k = mallory
			}
			req.Sig, _ = captoken.SignRequest(k, req.SigningHash())
			reply, err := pool.Do(ctx, target.Addr, target.PubKey, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer reply.Close()
			return reply.Status
		}
		good, _ := captoken.Issue(owner, vol.ID(), captoken.Caveats{Perms: captoken.PermRead, Expiry: time.Now().Add(time.Hour).Unix(), Grantee: crypto.CompressPubkey(&holder.PublicKey)})
		if st := get(good, nil); st != wire.StatusOK {
			t.Fatalf("valid token: %s", st)
		}
		expired, _ := captoken.Issue(owner, vol.ID(), captoken.Caveats{Perms: captoken.PermRead, Expiry: time.Now().Add(-time.Minute).Unix(), Grantee: crypto.CompressPubkey(&holder.PublicKey)})
		if st := get(expired, nil); st != wire.StatusExpired {
			t.Fatalf("expired token: %s", st)
		}
		forged := &captoken.Token{Version: good.Version, Volume: good.Volume, Links: []captoken.Link{{Caveats: good.Links[0].Caveats, Sig: bytes.Clone(good.Links[0].Sig)}}}
		forged.Links[0].Caveats.Perms = captoken.PermAll
		if st := get(forged, nil); st != wire.StatusUnauthorized {
			t.Fatalf("forged token: %s", st)
		}
		if st := get(good, mallory); st != wire.StatusUnauthorized {
			t.Fatalf("stolen token: %s", st)
		}
		// Revocation: append the token's id to the relay's revocation file.
		for _, p := range e.procs {
			if p.info.ID == target.ID {
				captoken.AppendRevocation(filepath.Join(p.home, "revoked.txt"), good.ID())
			}
		}
		if st := get(good, nil); st != wire.StatusUnauthorized {
			t.Fatalf("revoked token: %s", st)
		}
	})

	t.Run("relay killed mid-upload", func(t *testing.T) {
		// 3+2 on 6 relays leaves one spare: the upload must complete.
		cw := newClient(t, e, cbfs.Config{Key: owner, Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))})
		v4, err := cw.CreateVolume(ctx, cbfs.VolumeOptions{K: 3, M: 2})
		if err != nil {
			t.Fatal(err)
		}
		u, err := v4.Upload(ctx, "/big")
		if err != nil {
			t.Fatal(err)
		}
		const size = 48 << 20
		src := &patterned{n: size, seed: 9}
		if _, err := io.CopyN(u, src, 8<<20); err != nil {
			t.Fatal(err)
		}
		e.procs[2].kill9()
		t0 := time.Now()
		if _, err := io.Copy(u, src); err != nil {
			t.Fatal(err)
		}
		t.Logf("rest of upload written in %v", time.Since(t0))
		if _, err := u.Commit(); err != nil {
			t.Fatalf("commit after relay death: %v", err)
		}
		if _, err := u.Commit(); !errors.Is(err, cbfs.ErrUploadDone) {
			t.Fatalf("second commit: %v", err)
		}
		t.Logf("committed after %v", time.Since(t0))
		checkFile(t, ctx, v4, "/big", size, 9)
		t.Logf("read back after %v", time.Since(t0))

		// 4+2 with one relay dead: not enough relays, fails cleanly and
		// nothing becomes visible.
		u2, err := vol.Upload(ctx, "/never")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(u2, &patterned{n: 6 << 20, seed: 1})
		if _, err := u2.Commit(); !errors.Is(err, cbfs.ErrInsufficientRelays) {
			t.Fatalf("upload without enough relays: %v", err)
		}
		if _, err := vol.Stat(ctx, "/never"); !errors.Is(err, cbfs.ErrNotFound) {
			t.Fatalf("failed upload visible: %v", err)
		}
		t.Logf("clean failure after %v", time.Since(t0))
		e.restart(2)
	})

	if os.Getenv("CBFS_BIG") == "1" && !testing.Short() {
		t.Run("1GiB", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			roundTrip(t, ctx, vol, "/big/1g", 1<<30, 7)
		})
	}

	t.Run("SIGTERM shuts down cleanly", func(t *testing.T) {
		p := e.procs[0]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			t.Fatal("relay did not stop on SIGTERM")
		}
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	})
}
