package fuse_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/ethereum/go-ethereum/crypto"
)

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// TestFUSE runs every mount test against one chain node and six relays.
func TestFUSE(t *testing.T) {
	e := newEnv(t)
	t.Run("POSIX", func(t *testing.T) { testPOSIX(t, e) })
	t.Run("POSIXSuite", func(t *testing.T) { testPOSIXSuite(t, e) })
	t.Run("SpecialFiles", func(t *testing.T) { testSpecialFiles(t, e) })
	t.Run("HardLinks", func(t *testing.T) { testHardLinks(t, e) })
	t.Run("HardLinksTwoMounts", func(t *testing.T) { testHardLinksTwoMounts(t, e) })
	t.Run("StreamedWrite", func(t *testing.T) { testStreamedWrite(t, e) })
	t.Run("CommitsPerFile", func(t *testing.T) { testCommitsPerFile(t, e) })
	t.Run("SegmentReads", func(t *testing.T) { testSegmentReads(t, e) })
	t.Run("TwoMounts", func(t *testing.T) { testTwoMounts(t, e) })
	t.Run("ReadOnlyToken", func(t *testing.T) { testReadOnly(t, e) })
	t.Run("MountErrors", func(t *testing.T) { testMountErrors(t, e) })
	t.Run("Programs", func(t *testing.T) { testPrograms(t, e) })
	t.Run("SignalFlush", func(t *testing.T) { testSignalFlush(t, e) })
	t.Run("KilledWithDirtyData", func(t *testing.T) { testKilled(t, e) })
	t.Run("Unprivileged", func(t *testing.T) { testUnprivileged(t, e) })
	// Last: it stops relays.
	t.Run("RelaysKilledWhileReading", func(t *testing.T) { testRelaysKilled(t, e) })
}

func testPOSIX(t *testing.T, e *env) {
	key, v := e.volume(t)
	ctx := context.Background()
	// A file written with Put (no POSIX metadata) under an implicit directory.
	putData := randBytes(300 << 10)
	if _, err := v.Put(ctx, "/legacy/dir/put.bin", bytes.NewReader(putData)); err != nil {
		t.Fatal(err)
	}
	mt, dir := mount(t, v, fuse.Options{})
	p := func(s string) string { return filepath.Join(dir, s) }

	if b, err := os.ReadFile(p("legacy/dir/put.bin")); err != nil || !bytes.Equal(b, putData) {
		t.Fatalf("read Put file: %v", err)
	}
	if st, err := os.Stat(p("legacy/dir")); err != nil || !st.IsDir() || st.Mode().Perm() != 0o755 {
		t.Fatalf("implicit dir: %v %v", st, err)
	}

	// create, write, read, stat
	big := randBytes(1<<20 + 12345) // 5 segments of 256 KiB
	if err := os.WriteFile(p("big.bin"), big, 0o640); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p("big.bin")); err != nil || st.Size() != int64(len(big)) || st.Mode().Perm() != 0o640 {
		t.Fatalf("stat: %v %v", st, err)
	}
	// random reads
	f, err := os.Open(p("big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{700000, 0, 262143, 1<<20 + 12000, 5} {
		buf := make([]byte, 4096)
		n, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[:n], big[off:min(off+4096, int64(len(big)))]) {
			t.Fatalf("random read at %d differs", off)
		}
	}
	f.Close()
	// overwrite in the middle, then append
	f, err = os.OpenFile(p("big.bin"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	patch := randBytes(100000)
	if _, err := f.WriteAt(patch, 250000); err != nil {
		t.Fatal(err)
	}
	copy(big[250000:], patch)
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync: %v", err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	big = append(big, "tail"...)
	f.Close()
	if b, _ := os.ReadFile(p("big.bin")); !bytes.Equal(b, big) {
		t.Fatal("content after overwrite+append differs")
	}
	// truncate down and up
	if err := os.Truncate(p("big.bin"), 300000); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p("big.bin"), 400000); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, big[:300000]...), make([]byte, 100000)...)
	if b, _ := os.ReadFile(p("big.bin")); !bytes.Equal(b, want) {
		t.Fatal("content after truncate differs")
	}
	// O_TRUNC
	if err := os.WriteFile(p("small.txt"), []byte("hello world"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("small.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p("small.txt")); string(b) != "hi" {
		t.Fatalf("O_TRUNC: %q", b)
	}
	// O_EXCL
	if _, err := os.OpenFile(p("small.txt"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); errnoOf(err) != syscall.EEXIST {
		t.Fatalf("O_EXCL on existing: %v", err)
	}
	// mkdir, rmdir
	if err := os.MkdirAll(p("a/b/c"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p("a/b")); errnoOf(err) != syscall.ENOTEMPTY {
		t.Fatalf("rmdir non-empty: %v", err)
	}
	if err := os.Mkdir(p("a"), 0o755); errnoOf(err) != syscall.EEXIST {
		t.Fatalf("mkdir existing: %v", err)
	}
	if err := os.Remove(p("a/b/c")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Rmdir(p("small.txt")); errnoOf(err) != syscall.ENOTDIR {
		t.Fatalf("rmdir on file: %v", err)
	}
	if err := syscall.Unlink(p("a")); errnoOf(err) != syscall.EISDIR {
		t.Fatalf("unlink on dir: %v", err)
	}
	// rename, including over an existing file, and of a directory
	os.WriteFile(p("a/one.txt"), []byte("one"), 0o644)
	os.WriteFile(p("a/two.txt"), []byte("two"), 0o644)
	if err := os.Rename(p("a/one.txt"), p("a/two.txt")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p("a/two.txt")); string(b) != "one" {
		t.Fatalf("rename over: %q", b)
	}
	if _, err := os.Stat(p("a/one.txt")); !os.IsNotExist(err) {
		t.Fatalf("old name still there: %v", err)
	}
	if err := os.Rename(p("a"), p("z")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p("z/two.txt")); string(b) != "one" {
		t.Fatalf("after dir rename: %q", b)
	}
	if err := os.Rename(p("z"), p("z/b/inside")); errnoOf(err) != syscall.EINVAL {
		t.Fatalf("rename into own subtree: %v", err)
	}
	os.Mkdir(p("full"), 0o755)
	os.WriteFile(p("full/x"), nil, 0o644)
	if err := os.Rename(p("z/b"), p("full")); errnoOf(err) != syscall.ENOTEMPTY && errnoOf(err) != syscall.EEXIST {
		t.Fatalf("rename dir over non-empty dir: %v", err)
	}
	// symlink, readlink
	if err := os.Symlink("../z/two.txt", p("full/link")); err != nil {
		t.Fatal(err)
	}
	if tgt, err := os.Readlink(p("full/link")); err != nil || tgt != "../z/two.txt" {
		t.Fatalf("readlink: %q %v", tgt, err)
	}
	if b, _ := os.ReadFile(p("full/link")); string(b) != "one" {
		t.Fatalf("through symlink: %q", b)
	}
	// chmod, chown, utimens
	if err := os.Chmod(p("small.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p("small.txt"), 1234, 5678); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
	if err := os.Chtimes(p("small.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p("z"), 0o711); err != nil {
		t.Fatal(err)
	}
	// unlink of an open file: the handle keeps working
	os.WriteFile(p("gone.txt"), []byte("still here"), 0o644)
	g, err := os.Open(p("gone.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p("gone.txt")); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(g); string(b) != "still here" {
		t.Fatalf("read of unlinked open file: %q", b)
	}
	g.Close()
	// statfs
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(dir, &sfs); err != nil || sfs.Blocks == 0 || sfs.Bsize == 0 {
		t.Fatalf("statfs: %+v %v", sfs, err)
	}
	// readdir
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range ents {
		names = append(names, de.Name())
	}
	if got := strings.Join(names, ","); got != "big.bin,full,legacy,small.txt,z" {
		t.Fatalf("readdir: %s", got)
	}

	// Everything is in the manifest: unmount, mount a fresh client, compare.
	unmount(t, mt)
	v2 := e.reopen(t, key, v.ID())
	man, err := v2.Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := man.Lookup("/full/link"); i < 0 || man.Files[i].Target != "../z/two.txt" || man.Files[i].Mode&syscall.S_IFMT != syscall.S_IFLNK {
		t.Fatalf("symlink not in the manifest")
	}
	_, dir2 := mount(t, v2, fuse.Options{ReadOnly: true})
	q := func(s string) string { return filepath.Join(dir2, s) }
	st, err := os.Stat(q("small.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if st.Mode().Perm() != 0o600 || sys.Uid != 1234 || sys.Gid != 5678 || !st.ModTime().Equal(mtime) {
		t.Fatalf("metadata after remount: mode %v uid %d gid %d mtime %v", st.Mode(), sys.Uid, sys.Gid, st.ModTime())
	}
	if st, _ := os.Stat(q("z")); st == nil || st.Mode().Perm() != 0o711 || !st.IsDir() {
		t.Fatalf("dir mode after remount: %v", st)
	}
	if b, _ := os.ReadFile(q("big.bin")); !bytes.Equal(b, want) {
		t.Fatal("big.bin after remount differs")
	}
	if tgt, _ := os.Readlink(q("full/link")); tgt != "../z/two.txt" {
		t.Fatalf("symlink after remount: %q", tgt)
	}
	if _, err := os.Stat(q("gone.txt")); !os.IsNotExist(err) {
		t.Fatalf("unlinked file came back: %v", err)
	}
	if _, err := os.Stat(q("z/b")); err != nil {
		t.Fatalf("empty dir lost: %v", err)
	}
}

func testTwoMounts(t *testing.T, e *env) {
	key, v := e.volume(t)
	_, a := mount(t, v, fuse.Options{})
	_, b := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	data := randBytes(600 << 10)
	if err := os.WriteFile(filepath.Join(a, "from-a.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	d := eventually(t, 10*time.Second, func() error {
		got, err := os.ReadFile(filepath.Join(b, "from-a.bin"))
		if err == nil && !bytes.Equal(got, data) {
			return errors.New("different content")
		}
		return err
	})
	t.Logf("a close()d file is visible in the other mount after %v", d)
	// b has the file in its page cache (kept across opens while the content
	// is unchanged); a rewrites it with the same size: b's next open after
	// the change arrives must not serve the stale pages.
	for range 2 {
		if got, _ := os.ReadFile(filepath.Join(b, "from-a.bin")); !bytes.Equal(got, data) {
			t.Fatal("cached read differs")
		}
	}
	data2 := randBytes(600 << 10)
	if err := os.WriteFile(filepath.Join(a, "from-a.bin"), data2, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		got, err := os.ReadFile(filepath.Join(b, "from-a.bin"))
		if err == nil && !bytes.Equal(got, data2) {
			return errors.New("stale content")
		}
		return err
	})
	data = data2
	// namespace changes the other way, without fsync
	if err := os.Mkdir(filepath.Join(b, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(b, "from-a.bin"), filepath.Join(b, "dir", "moved.bin")); err != nil {
		t.Fatal(err)
	}
	d = eventually(t, 10*time.Second, func() error {
		if _, err := os.Stat(filepath.Join(a, "from-a.bin")); err == nil {
			return errors.New("old name still visible")
		}
		_, err := os.Stat(filepath.Join(a, "dir", "moved.bin"))
		return err
	})
	t.Logf("a rename is visible in the other mount after %v", d)
	// both write different files at once: both survive (path-level merge)
	os.WriteFile(filepath.Join(a, "x.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(b, "y.txt"), []byte("y"), 0o644)
	eventually(t, 10*time.Second, func() error {
		for _, dir := range []string{a, b} {
			for _, n := range []string{"x.txt", "y.txt"} {
				if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	// a tree removed on one side disappears, directories included
	if err := os.RemoveAll(filepath.Join(b, "dir")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if _, err := os.Stat(filepath.Join(a, "dir")); !os.IsNotExist(err) {
			return errors.New("dir still there")
		}
		return nil
	})
	// overwrite: the other side sees new content on its next open
	os.WriteFile(filepath.Join(a, "x.txt"), []byte("x2"), 0o644)
	eventually(t, 10*time.Second, func() error {
		if got, _ := os.ReadFile(filepath.Join(b, "x.txt")); string(got) != "x2" {
			return errors.New("stale: " + string(got))
		}
		return nil
	})
}

func testReadOnly(t *testing.T, e *env) {
	_, v := e.volume(t)
	ctx := context.Background()
	if _, err := v.Put(ctx, "/doc.txt", strings.NewReader("shared")); err != nil {
		t.Fatal(err)
	}
	bob := e.account(t)
	tok, err := v.Grant(ctx, cbfs.GrantOptions{Grantee: &bob.PublicKey, Perms: captoken.PermRead | captoken.PermList, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	bv, err := clientFor(t, e.c, bob).OpenShared(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	_, dir := mount(t, bv, fuse.Options{})
	if b, err := os.ReadFile(filepath.Join(dir, "doc.txt")); err != nil || string(b) != "shared" {
		t.Fatalf("read through token: %q %v", b, err)
	}
	checks := map[string]error{
		"create": os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644),
		"write":  os.WriteFile(filepath.Join(dir, "doc.txt"), []byte("x"), 0o644),
		"mkdir":  os.Mkdir(filepath.Join(dir, "d"), 0o755),
		"unlink": os.Remove(filepath.Join(dir, "doc.txt")),
		"rename": os.Rename(filepath.Join(dir, "doc.txt"), filepath.Join(dir, "b.txt")),
		"chmod":  os.Chmod(filepath.Join(dir, "doc.txt"), 0o600),
		"link":   os.Symlink("doc.txt", filepath.Join(dir, "l")),
	}
	for op, err := range checks {
		if errnoOf(err) != syscall.EROFS {
			t.Errorf("%s on a read-only mount: %v, want EROFS", op, err)
		}
	}
}

func testMountErrors(t *testing.T, e *env) {
	_, v := e.volume(t)
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := fuse.Mount(ctx, v, missing, fuse.Options{}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing mount point: %v", err)
	}
	mt, dir := mount(t, v, fuse.Options{})
	if _, err := fuse.Mount(ctx, v, dir, fuse.Options{}); !errors.Is(err, fuse.ErrBusy) {
		t.Fatalf("mount on a mount point: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, "open.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("data")
	if err := fuse.Unmount(dir, false); !errors.Is(err, fuse.ErrBusy) {
		t.Fatalf("unmount with an open file: %v", err)
	}
	f.Close()
	if err := fuse.Unmount(dir, false); err != nil {
		t.Fatal(err)
	}
	if err := waitTimeout(t, mt, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := fuse.Unmount(dir, false); err == nil || !strings.Contains(err.Error(), "not mounted") {
		t.Fatalf("unmount of a plain dir: %v", err)
	}
}

func testRelaysKilled(t *testing.T, e *env) {
	key, v := e.volume(t)
	data := randBytes(2 << 20)
	mt, dir := mount(t, v, fuse.Options{})
	if err := os.WriteFile(filepath.Join(dir, "f.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	unmount(t, mt)
	// A fresh mount with a cold cache; read half, lose two relays (M=2),
	// read the rest.
	_, dir = mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	f, err := os.Open(filepath.Join(dir, "f.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(f, got[:1<<20]); err != nil {
		t.Fatal(err)
	}
	e.relays[0]()
	e.relays[1]()
	start := time.Now()
	if _, err := io.ReadFull(f, got[1<<20:]); err != nil {
		t.Fatalf("read after killing 2 of 6 relays: %v", err)
	}
	t.Logf("read 1 MiB with 2 relays down in %v", time.Since(start))
	if !bytes.Equal(got, data) {
		t.Fatal("content differs")
	}
}

// Keep the crypto import used when helpers change.
var _ = crypto.GenerateKey

// countingDir counts directory lookups: ReadSegment makes one per segment
// it fetches.
type countingDir struct {
	cbfs.Directory
	n atomic.Int64
}

func (d *countingDir) Relays(ctx context.Context) ([]cbfs.RelayInfo, error) {
	d.n.Add(1)
	return d.Directory.Relays(ctx)
}

// testSegmentReads: a random read on a cold mount fetches only the segment
// it needs, not the file.
func testSegmentReads(t *testing.T, e *env) {
	key, v := e.volume(t)
	data := randBytes(20 * 256 << 10) // 20 segments
	if _, err := v.Put(context.Background(), "/big.bin", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	dir := &countingDir{Directory: onchain.Directory{Client: e.c}}
	cl, err := cbfs.New(cbfs.Config{Key: key, Directory: dir, Anchor: &onchain.Anchor{Client: e.c, Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	v2, err := cl.OpenVolume(context.Background(), v.ID())
	if err != nil {
		t.Fatal(err)
	}
	_, mnt := mount(t, v2, fuse.Options{PollInterval: time.Hour})
	f, err := os.Open(filepath.Join(mnt, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before := dir.n.Load()
	buf := make([]byte, 4096)
	off := int64(13*256<<10 + 1000)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, data[off:off+4096]) {
		t.Fatal("content differs")
	}
	if n := dir.n.Load() - before; n < 1 || n > 2 {
		t.Fatalf("a 4 KiB read fetched %d segments, want 1 (2 with read-ahead)", n)
	}
	before = dir.n.Load()
	all, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("full read: %v", err)
	}
	t.Logf("full read fetched %d more segments", dir.n.Load()-before)
}
