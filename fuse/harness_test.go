package fuse_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// env is a chain node with relays registered on it (copied from the
// pattern of internal/cli/volume_test.go).
type env struct {
	url    string
	c      *sdk.Client
	relays []func() // stop functions, one per relay
}

// startRelays runs n real relay nodes (QUIC on loopback, bbolt stores) in
// process and registers each in the chain's Relay Registry.
func startRelays(t *testing.T, c *sdk.Client, n int) []func() {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var stops []func()
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
		rctx, rcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); node.Run(rctx) }()
		stop := sync.OnceFunc(func() { rcancel(); <-done })
		t.Cleanup(stop)
		stops = append(stops, stop)
		<-node.Ready()
		// Like cowboy-relay: a registrar and a prover sharing the key's
		// send lock (a funded volume's challenges must be answered, or its
		// relays are flagged unhealthy).
		mu := new(sync.Mutex)
		reg := &onchain.Registrar{Client: c, Key: key, Addr: node.Addr().String(), Capacity: 1 << 30, Stake: genesis.CBY(100), Interval: time.Second, Logger: slog.New(slog.DiscardHandler), SendMu: mu}
		if err := reg.Register(ctx); err != nil {
			t.Fatal(err)
		}
		go reg.Run(ctx)
		go (&onchain.Prover{Client: c, Key: key, Holdings: node, Refusable: relay.IsRefusable, Logger: slog.New(slog.DiscardHandler), SendMu: mu}).Run(rctx)
	}
	return stops
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	return &env{url: srv.URL, c: c, relays: startRelays(t, c, 6)}
}

// account returns a funded key.
func (e *env) account(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, _ := crypto.GenerateKey()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := e.c.Chain().Faucet(ctx, types.PubkeyToAddress(key.PublicKey), genesis.CBY(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
	return key
}

func clientFor(t testing.TB, c *sdk.Client, key *ecdsa.PrivateKey) *cbfs.Client {
	cl, err := cbfs.New(cbfs.Config{Key: key, Directory: onchain.Directory{Client: c},
		Anchor: &onchain.Anchor{Client: c, Key: key}, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// volume creates a volume (256 KiB segments, so small files span several)
// owned by a new account.
func (e *env) volume(t *testing.T) (*ecdsa.PrivateKey, *cbfs.Volume) {
	key := e.account(t)
	v, err := clientFor(t, e.c, key).CreateVolume(context.Background(), cbfs.VolumeOptions{K: 4, M: 2, SegmentSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return key, v
}

// reopen opens the volume through a fresh client (no shared state).
func (e *env) reopen(t *testing.T, key *ecdsa.PrivateKey, id cbfs.VolumeID) *cbfs.Volume {
	v, err := clientFor(t, e.c, key).OpenVolume(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// mount mounts v on a fresh directory; cleanup unmounts lazily even if the
// test failed.
// mount mounts v with every commit's dirty marks checked against a walk
// of the namespace (fuse.WithDirtyCheck).
func mount(t *testing.T, v *cbfs.Volume, o fuse.Options) (*fuse.Mounted, string) {
	t.Helper()
	return mountChecked(t, v, o, true)
}

// mountChecked is mount with the dirty-mark check on or off (benchmarks
// measure the mount as users run it: off).
func mountChecked(t *testing.T, v *cbfs.Volume, o fuse.Options, check bool) (*fuse.Mounted, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if o.PollInterval == 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.CommitDelay == 0 {
		o.CommitDelay = 100 * time.Millisecond
	}
	o.CacheDir = t.TempDir()
	if check {
		o = fuse.WithDirtyCheck(o)
	}
	if testing.Verbose() {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	mt, err := fuse.Mount(context.Background(), v, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lazyUnmount(t, dir); waitTimeout(t, mt, time.Minute) })
	return mt, dir
}

func lazyUnmount(t testing.TB, dir string) {
	syscall.Unmount(dir, syscall.MNT_DETACH)
}

func waitTimeout(t testing.TB, mt *fuse.Mounted, d time.Duration) error {
	ch := make(chan error, 1)
	go func() { ch <- mt.Wait() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Errorf("mount %s did not finish within %s", mt.Dir(), d)
		return nil
	}
}

func unmount(t *testing.T, mt *fuse.Mounted) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := mt.Unmount(ctx); err != nil {
		t.Fatalf("unmount: %v", err)
	}
}

// run runs a program with dir (usually on the mount) as its working
// directory. The chdir happens in a shell after exec, never in the forked
// child: Go starts children with vfork, and a vforked child that enters a
// FUSE directory served by this very process can deadlock it (the parent
// thread waits in vfork holding its P, the collector waits for that P to
// stop the world, and the FUSE server cannot answer the child's lookup).
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `cd "$1" && shift && exec "$@"`, "sh", dir, name}, args...)...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func need(t *testing.T, progs ...string) {
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed (scripts/deps.sh installs it)", p)
		}
	}
}

// eventually polls f until it returns nil or the deadline passes.
func eventually(t *testing.T, d time.Duration, f func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < d {
		if err = f(); err == nil {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not within %s: %v", d, err)
	return 0
}

// ---- helper process: serves a mount until a signal (see TestMain) ----

const helperEnv = "CBFS_FUSE_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "serve" {
		os.Exit(serveHelper())
	}
	os.Exit(m.Run())
}

// serveHelper mounts the volume named by the environment and serves it
// until SIGINT/SIGTERM, like `cowboy volume mount`. It prints READY once
// mounted.
func serveHelper() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "helper:", err); return 1 }
	kb, _ := hex.DecodeString(os.Getenv("CBFS_KEY"))
	key, err := crypto.ToECDSA(kb)
	if err != nil {
		return fail(err)
	}
	id, err := captoken.ParseVolumeID(os.Getenv("CBFS_VOLUME"))
	if err != nil {
		return fail(err)
	}
	c := sdk.New(os.Getenv("CBFS_URL"))
	cl, err := cbfs.New(cbfs.Config{Key: key, Directory: onchain.Directory{Client: c}, Anchor: &onchain.Anchor{Client: c, Key: key}})
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	v, err := cl.OpenVolume(ctx, id)
	if err != nil {
		return fail(err)
	}
	mt, err := fuse.Mount(ctx, v, os.Getenv("CBFS_DIR"), fuse.Options{CacheDir: os.Getenv("CBFS_CACHE"), CommitDelay: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		return fail(err)
	}
	fmt.Println("READY")
	if os.Getenv("CBFS_SELFTEST") != "" {
		// Prove the mount works for this (unprivileged) user, then unmount.
		p := filepath.Join(mt.Dir(), "selftest.txt")
		if err := os.WriteFile(p, []byte("written by uid "+fmt.Sprint(os.Getuid())), 0o644); err != nil {
			return fail(err)
		}
		if b, err := os.ReadFile(p); err != nil || !strings.HasPrefix(string(b), "written") {
			return fail(fmt.Errorf("read back: %q %v", b, err))
		}
		if err := mt.Unmount(context.Background()); err != nil {
			return fail(err)
		}
		return 0
	}
	if err := mt.Serve(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// helper starts the serving process for volume id on dir.
func (e *env) helper(t *testing.T, key *ecdsa.PrivateKey, id cbfs.VolumeID, dir string, cred *syscall.Credential, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=serve", "CBFS_KEY="+hex.EncodeToString(crypto.FromECDSA(key)),
		"CBFS_VOLUME="+id.String(), "CBFS_URL="+e.url, "CBFS_DIR="+dir, "CBFS_CACHE="+t.TempDir())
	cmd.Env = append(cmd.Env, extra...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	cmd.Stderr = &prefixWriter{t: t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		lazyUnmount(t, dir)
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if sc.Text() == "READY" && !ok {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("helper exited before mounting")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("helper did not mount within 60s")
	}
	return cmd
}

type prefixWriter struct {
	t  *testing.T
	mu sync.Mutex
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if testing.Verbose() {
		os.Stderr.Write(p)
	}
	return len(p), nil
}

func hexKey(k *ecdsa.PrivateKey) string { return hex.EncodeToString(crypto.FromECDSA(k)) }
