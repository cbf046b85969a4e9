package fuse_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
)

// statOf returns the inode number and link count of path.
func statOf(t *testing.T, path string) (ino uint64, nlink uint64) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return st.Ino, uint64(st.Nlink)
}

func wantLinks(t *testing.T, n uint64, paths ...string) {
	t.Helper()
	ino0, _ := statOf(t, paths[0])
	for _, p := range paths {
		ino, nl := statOf(t, p)
		if ino != ino0 || nl != n {
			t.Fatalf("%s: inode %d nlink %d, want inode %d nlink %d", filepath.Base(p), ino, nl, ino0, n)
		}
	}
}

func wantContent(t *testing.T, path string, want []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("%s: %d bytes (%v), want %d", filepath.Base(path), len(b), err, len(want))
	}
}

// testHardLinks: link(2) gives a file a second name with the same inode;
// a change through either name shows through both, st_nlink counts the
// names, unlinking one keeps the content (and its shards) for the other,
// rename over a name is atomic, and all of it survives a remount by a
// fresh client. (Before inodes, link(2) failed with EPERM.)
func testHardLinks(t *testing.T, e *env) {
	key, v := e.volume(t)
	mt, dir := mount(t, v, fuse.Options{})
	p := func(s string) string { return filepath.Join(dir, s) }
	big := randBytes(200 << 10) // above the inline threshold: stored as shards
	if err := os.WriteFile(p("a"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p("a"), p("b")); err != nil {
		t.Fatalf("link: %v", err)
	}
	wantLinks(t, 2, p("a"), p("b"))
	if err := os.Link(p("a"), p("b")); errnoOf(err) != syscall.EEXIST {
		t.Fatalf("link over an existing name: %v, want EEXIST", err)
	}
	if err := os.Mkdir(p("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p("d"), p("d2")); errnoOf(err) != syscall.EPERM {
		t.Fatalf("link of a directory: %v, want EPERM", err)
	}
	// A change through one name shows through the other.
	small := []byte("rewritten through b")
	if err := os.WriteFile(p("b"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	wantContent(t, p("a"), small)
	if err := os.Chmod(p("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p("b")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode through the other name: %v %v", fi, err)
	}
	if err := os.WriteFile(p("b"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	// Unlinking one name keeps the other, and the content's shards.
	if err := os.Remove(p("a")); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, 1, p("b"))
	wantContent(t, p("b"), big)
	// A third name in another directory, then rename over an existing
	// file: the target is replaced by the linked inode in one step.
	if err := os.Link(p("b"), p("d/c")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("over"), []byte("old content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p("d/c"), p("over")); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, 2, p("b"), p("over"))
	wantContent(t, p("over"), big)
	// Open but unlinked from every name: readable until closed.
	if err := os.WriteFile(p("tmp1"), []byte("open but unlinked"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p("tmp1"), p("tmp2")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p("tmp1"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(p("tmp1"))
	os.Remove(p("tmp2"))
	if got, err := io.ReadAll(f); err != nil || string(got) != "open but unlinked" {
		t.Fatalf("read of an unlinked open file: %q %v", got, err)
	}
	f.Close()

	// A fresh client sees both names as one inode with the content.
	unmount(t, mt)
	mt2, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	p2 := func(s string) string { return filepath.Join(dir2, s) }
	wantLinks(t, 2, p2("b"), p2("over"))
	wantContent(t, p2("over"), big)
	for _, gone := range []string{"a", "d/c", "tmp1", "tmp2"} {
		if _, err := os.Lstat(p2(gone)); !os.IsNotExist(err) {
			t.Fatalf("%s after remount: %v", gone, err)
		}
	}
	// Still linked after the remount: a write through one name is seen
	// through the other, and unlinking one keeps the other.
	if err := os.WriteFile(p2("over"), []byte("after remount"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantContent(t, p2("b"), []byte("after remount"))
	if err := os.Remove(p2("b")); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, 1, p2("over"))
	unmount(t, mt2)
	_, dir3 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	wantContent(t, filepath.Join(dir3, "over"), []byte("after remount"))
}

// testHardLinksTwoMounts: a hard link made on one mount reaches another
// mount of the volume as one inode with two names, and a change through
// either name there is seen through the other on the first.
func testHardLinksTwoMounts(t *testing.T, e *env) {
	key, v := e.volume(t)
	_, a := mount(t, v, fuse.Options{})
	_, b := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	if err := os.WriteFile(filepath.Join(a, "x"), []byte("from a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(a, "x"), filepath.Join(a, "y")); err != nil {
		t.Fatal(err)
	}
	// Namespace changes are committed within CommitDelay; the other mount
	// sees them within its poll interval and attribute timeout.
	eventually(t, time.Minute, func() error {
		var sx, sy syscall.Stat_t
		if err := syscall.Stat(filepath.Join(b, "x"), &sx); err != nil {
			return err
		}
		if err := syscall.Stat(filepath.Join(b, "y"), &sy); err != nil {
			return err
		}
		if sx.Ino != sy.Ino || sy.Nlink != 2 {
			return fmt.Errorf("x inode %d, y inode %d nlink %d", sx.Ino, sy.Ino, sy.Nlink)
		}
		return nil
	})
	if err := os.WriteFile(filepath.Join(b, "y"), []byte("from b, through y"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		got, err := os.ReadFile(filepath.Join(a, "x"))
		if err != nil {
			return err
		}
		if string(got) != "from b, through y" {
			return fmt.Errorf("x on the first mount reads %q", got)
		}
		return nil
	})
}
