package fuse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

// testCommitsPerFile counts what a tar-like writer costs (operations, not
// time): each file is created, written, closed, then given its mtime and
// mode (utimensat, chmod), in a volume that already holds 2,000 files.
// Every close commits exactly once; the metadata changes after a close
// make no commit of their own but ride along with the next one, and a
// commit carries only the entries that changed (the file, its directory,
// the previous file's metadata), never the volume. fsync of the directory
// makes the last file's metadata durable: a fresh mount shows it.
func testCommitsPerFile(t *testing.T, e *env) {
	key, v := e.volume(t)
	const preexisting = 2000
	if _, err := v.Update(context.Background(), func(m *cbfs.Manifest) error {
		for i := range preexisting {
			m.Files = append(m.Files, cbfs.FileEntry{Path: fmt.Sprintf("/pre/d%02d/f%05d", i%20, i), ModTime: int64(i) + 1, Mode: 0o100644})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// No background commits during the count: only close and fsync commit.
	// (The dirty-mark check is off: it walks the whole namespace, and
	// entries made by Update without inode fields read back normalised.)
	mt, dir := mountChecked(t, v, fuse.Options{CommitDelay: time.Hour}, false)
	sub := filepath.Join(dir, "x")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c0, ch0 := mt.CommitCounts()
	const files = 30
	mtime := time.Unix(1_700_000_000, 0)
	for i := range files {
		p := filepath.Join(sub, fmt.Sprintf("f%02d", i))
		if err := os.WriteFile(p, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	c1, ch1 := mt.CommitCounts()
	commits, changes := c1-c0, ch1-ch0
	t.Logf("%d files (write, close, utimes, chmod) in a volume of %d: %d commits, %d entries changed", files, preexisting, commits, changes)
	if commits != files {
		t.Fatalf("%d files made %d commits, want one per close", files, commits)
	}
	// The first commit also carries the mkdir; each carries the file, its
	// directory's mtime and the previous file's metadata.
	if changes > 3*files+1 {
		t.Fatalf("%d commits changed %d entries, want at most 3 per file", commits, changes)
	}

	// The last file's utimes and chmod are pending; fsync of the directory
	// commits them.
	d, err := os.Open(sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if c2, _ := mt.CommitCounts(); c2 != c1+1 {
		t.Fatalf("fsync of the directory made %d commits, want 1", c2-c1)
	}
	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{ReadOnly: true})
	for i := range files {
		p := filepath.Join(dir2, "x", fmt.Sprintf("f%02d", i))
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := mtime.Add(time.Duration(i) * time.Second); !st.ModTime().Equal(want) || st.Mode().Perm() != 0o640 {
			t.Fatalf("%s from a fresh mount: mtime %v mode %v, want %v and 0640", p, st.ModTime(), st.Mode().Perm(), want)
		}
	}
}
