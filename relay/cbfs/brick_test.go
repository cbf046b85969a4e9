package cbfs_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// landingAnchor is a MemAnchor whose next commit, when armed, behaves like a
// chain transaction whose receipt wait was cancelled: the caller gets
// context.Canceled, but the commitment is held and lands later (land).
type landingAnchor struct {
	cbfs.MemAnchor
	mu      sync.Mutex
	armed   bool
	pending func() error
}

func (a *landingAnchor) CommitManifest(ctx context.Context, vol cbfs.VolumeID, root [32]byte, version uint64) error {
	a.mu.Lock()
	if a.armed {
		a.armed = false
		a.pending = func() error { return a.MemAnchor.CommitManifest(context.Background(), vol, root, version) }
		a.mu.Unlock()
		return context.Canceled
	}
	a.mu.Unlock()
	return a.MemAnchor.CommitManifest(ctx, vol, root, version)
}

func (a *landingAnchor) land(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	p := a.pending
	a.pending = nil
	a.mu.Unlock()
	if p == nil {
		t.Fatal("no commitment in flight")
	}
	if err := p(); err != nil {
		t.Fatalf("land: %v", err)
	}
}

// ownedVolume starts 6 relays and creates a volume owned by a new key,
// anchored in memory.
func ownedVolume(t *testing.T, ctx context.Context, o cbfs.VolumeOptions) (*cluster, *ecdsa.PrivateKey, *cbfs.MemAnchor, *cbfs.Volume) {
	t.Helper()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	anchor := &cbfs.MemAnchor{}
	vol, err := newClient(t, owner, cl.dir, anchor).CreateVolume(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return cl, owner, anchor, vol
}

// syncLog is a slog handler target safe for concurrent writes.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// addFile is a path operation: it sets path to an empty file (idempotent,
// as a re-applied operation must be).
func addFile(path string) func(*cbfs.Manifest) error {
	return func(m *cbfs.Manifest) error {
		e := cbfs.FileEntry{Path: path, ModTime: 42, Mode: 0o100644}
		if i := m.Lookup(path); i >= 0 {
			m.Files[i] = e
			return nil
		}
		m.Files = append(m.Files, e)
		return nil
	}
}

// A writer killed between its quorum write and its anchor (the checkpoint
// transaction's receipt wait cancelled, the transaction landing later; or
// no checkpoint at all) must leave the volume readable and writable, with
// every acknowledged commit (issue 13, defect A). Before the fix, a retry
// deleted the manifest copies of the version that then got anchored, and
// every later load failed ("load manifest vN ... not found").
func TestKilledWriterDoesNotBrickVolume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	anchor := &landingAnchor{}
	c, err := cbfs.New(cbfs.Config{Key: owner, Directory: cl.dir, Anchor: anchor, RequestTimeout: 10 * time.Second, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vol.Put(ctx, "/a", strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	anchor.mu.Lock()
	anchor.armed = true
	anchor.mu.Unlock()
	// The commit is durable once a relay majority holds it: the anchor is
	// not on its path.
	if _, err := vol.Update(ctx, addFile("/b")); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := vol.Checkpoint(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("checkpoint with a lost receipt: %v", err)
	}
	// Killed before anchoring the next commit at all.
	if _, err := vol.Update(ctx, addFile("/b2")); err != nil {
		t.Fatalf("update: %v", err)
	}
	c.Close()
	anchor.land(t) // the checkpoint transaction lands after all

	c2 := newClient(t, owner, cl.dir, anchor)
	v2, err := c2.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatalf("volume bricked: open: %v", err)
	}
	if _, err := v2.Info(ctx); err != nil {
		t.Fatalf("volume bricked: info: %v", err)
	}
	for _, p := range []string{"/a", "/b", "/b2"} {
		if _, err := v2.Stat(ctx, p); err != nil {
			t.Fatalf("acknowledged %s lost: %v", p, err)
		}
	}
	if _, err := v2.Put(ctx, "/c", strings.NewReader("after")); err != nil {
		t.Fatalf("volume bricked: put: %v", err)
	}
	if err := v2.Checkpoint(ctx); err != nil {
		t.Fatalf("checkpoint after recovery: %v", err)
	}
	root, _, err := anchor.LatestManifest(ctx, vol.ID())
	if err != nil || root != v2.Root() {
		t.Fatalf("anchored root %x, head %x (%v)", root[:4], v2.Root(), err)
	}
}

// An anchored root that no relay holds (left by an older client) must not
// brick the volume: the client recovers from the newest version the relays
// hold, says so, and commits on top of it.
func TestRecoverFromUnheldAnchoredRoot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, owner, anchor, vol := ownedVolume(t, ctx, cbfs.VolumeOptions{})
	if _, err := vol.Put(ctx, "/a", strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	_, ver, err := anchor.LatestManifest(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	// A root for the next version that was never stored anywhere.
	if err := anchor.CommitManifest(ctx, vol.ID(), [32]byte{0xba, 0xd}, ver+1); err != nil {
		t.Fatal(err)
	}
	var logs syncLog
	c2, err := cbfs.New(cbfs.Config{Key: owner, Directory: cl.dir, Anchor: anchor, RequestTimeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	v2, err := c2.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var got bytes.Buffer
	if _, err := v2.Get(ctx, "/a", &got); err != nil || got.String() != "hello" {
		t.Fatalf("get /a after recovery: %q %v", got.String(), err)
	}
	if !strings.Contains(logs.String(), "recovered") {
		t.Fatalf("recovery not reported; log:\n%s", logs.String())
	}
	if _, err := v2.Put(ctx, "/c", strings.NewReader("after")); err != nil {
		t.Fatalf("put after recovery: %v", err)
	}
	c3 := newClient(t, owner, cl.dir, anchor)
	v3, err := c3.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if _, err := v3.Stat(ctx, "/c"); err != nil {
		t.Fatalf("/c after reopen: %v", err)
	}
}
