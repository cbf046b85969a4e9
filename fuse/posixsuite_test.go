package fuse_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/hanwen/go-fuse/v2/posixtest"
	"golang.org/x/sys/unix"
)

// posixKnownFailures are the cases of go-fuse's POSIX suite that the mount
// does not pass, each with the reason (fuse/doc.go, "POSIX conformance",
// explains them). They are skipped, not hidden: the pass count logged by
// testPOSIXSuite counts them as failures.
var posixKnownFailures = map[string]string{
	"XAttr": "extended attributes are not stored: setxattr fails with ENOTSUP",
	// POSIX record locks are owned by the process: a second F_SETLK by the
	// same process converts its own lock and succeeds, which is what the
	// kernel's local locking (used because the mount implements no lock
	// operations) does. go-fuse's case expects EAGAIN, the behaviour of
	// its loopback file system, which takes open-file-description locks.
	"FcntlFlockLocksFile": "expects per-open-file lock conflicts within one process; POSIX and the kernel's local locks let a process convert its own lock",
}

// testPOSIXSuite runs github.com/hanwen/go-fuse/v2/posixtest, the
// conformance suite go-fuse runs on its own file systems, against a real
// mount: every case in its own directory of one mounted volume.
func testPOSIXSuite(t *testing.T, e *env) {
	_, v := e.volume(t)
	// The cases check the semantics of one mount; with close(2) waiting
	// for a commit each (a chain transaction on this commit path) the
	// file-heavy ones take minutes. DeferCloseCommit changes nothing a
	// single mount observes.
	_, dir := mount(t, v, fuse.Options{DeferCloseCommit: true})
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	sort.Strings(names)
	passed, skipped, failed := 0, 0, 0
	for _, name := range names {
		skip := false
		ok := t.Run(name, func(t *testing.T) {
			defer func() { skip = t.Skipped() }()
			if why, known := posixKnownFailures[name]; known {
				t.Skip("known failure: " + why)
			}
			sub := filepath.Join(dir, name)
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			posixtest.All[name](t, sub)
		})
		_, known := posixKnownFailures[name]
		switch {
		case known || !ok:
			failed++
		case skip:
			skipped++ // the case itself found the feature absent (ENOTSUP)
		default:
			passed++
		}
	}
	t.Logf("go-fuse posixtest on a CBFS mount: %d of %d cases pass, %d skip themselves, %d fail (%d known, listed in fuse/doc.go)",
		passed, len(names), skipped, failed, len(posixKnownFailures))
}

// testSpecialFiles: mkfifo and socket nodes are kept as modes (the kernel
// serves them) and survive a remount; device nodes are refused.
func testSpecialFiles(t *testing.T, e *env) {
	key, v := e.volume(t)
	mt, dir := mount(t, v, fuse.Options{})
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(dir, "sock"), syscall.S_IFSOCK|0o600, 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != syscall.EPERM {
		t.Fatalf("mknod of a device: %v, want EPERM", err)
	}
	// A FIFO works as one: the kernel connects reader and writer.
	done := make(chan error, 1)
	go func() {
		b, err := os.ReadFile(fifo)
		if err == nil && string(b) != "through the fifo" {
			err = fmt.Errorf("read %q", b)
		}
		done <- err
	}()
	if err := os.WriteFile(fifo, []byte("through the fifo"), 0); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	unmount(t, mt)
	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	for name, typ := range map[string]os.FileMode{"fifo": os.ModeNamedPipe, "sock": os.ModeSocket} {
		fi, err := os.Lstat(filepath.Join(dir2, name))
		if err != nil || fi.Mode().Type() != typ {
			t.Fatalf("%s after remount: %v %v", name, fi, err)
		}
	}
	if fi, _ := os.Lstat(filepath.Join(dir2, "fifo")); fi.Mode().Perm() != 0o640 {
		t.Fatalf("fifo mode after remount: %v", fi.Mode())
	}
}

// testStreamedWrite: a file written sequentially from empty is uploaded
// while it is written; rewriting sent bytes, truncating or unlinking it
// midway falls back to a whole upload or nothing. The content read from a
// fresh mount is what was written in every case.
func testStreamedWrite(t *testing.T, e *env) {
	key, v := e.volume(t)
	mt, dir := mount(t, v, fuse.Options{})
	want := map[string][]byte{}
	write := func(name string, f func(*os.File) error) {
		fh, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f(fh); err != nil {
			t.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = b
	}
	data := randBytes(2<<20 + 12345)
	write("sequential", func(f *os.File) error {
		for off := 0; off < len(data); off += 128 << 10 {
			if _, err := f.Write(data[off:min(len(data), off+128<<10)]); err != nil {
				return err
			}
		}
		return nil
	})
	write("rewritten", func(f *os.File) error {
		if _, err := f.Write(data[:1<<20]); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte("XYZ"), 100)
		return err
	})
	write("truncated", func(f *os.File) error {
		if _, err := f.Write(data[:1<<20]); err != nil {
			return err
		}
		if err := f.Truncate(300 << 10); err != nil {
			return err
		}
		_, err := f.WriteAt(data[:200<<10], 300<<10)
		return err
	})
	if !bytes.Equal(want["sequential"], data) || string(want["rewritten"][100:103]) != "XYZ" || len(want["truncated"]) != 500<<10 {
		t.Fatal("content differs before remount")
	}
	// unlinked while written: nothing is published
	f, err := os.Create(filepath.Join(dir, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data[:1<<20])
	os.Remove(filepath.Join(dir, "gone"))
	f.Close()
	unmount(t, mt)
	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir2, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s after remount: %v (%d bytes, want %d)", name, err, len(got), len(b))
		}
	}
	if _, err := os.Stat(filepath.Join(dir2, "gone")); !os.IsNotExist(err) {
		t.Fatalf("unlinked file published: %v", err)
	}
}
