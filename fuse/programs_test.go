package fuse_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
)

// sourceTree is a small real source tree to copy onto mounts: this package
// and relay/cbfs.
func sourceTree(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	dst := filepath.Join(t.TempDir(), "src")
	for _, d := range []string{"fuse", "relay/cbfs"} {
		os.MkdirAll(filepath.Join(dst, d), 0o755)
		run(t, root, "cp", "-a", filepath.Join(root, d)+"/.", filepath.Join(dst, d))
	}
	os.Symlink("relay/cbfs/doc.go", filepath.Join(dst, "doc-link.go"))
	return dst
}

func testPrograms(t *testing.T, e *env) {
	need(t, "git", "tar", "diff", "sqlite3", "rsync", "cp")
	key, v := e.volume(t)
	mt, dir := mount(t, v, fuse.Options{})
	src := sourceTree(t)

	t.Run("tar", func(t *testing.T) {
		ball := filepath.Join(t.TempDir(), "src.tar")
		run(t, src, "tar", "-cf", ball, ".")
		os.Mkdir(filepath.Join(dir, "tar"), 0o755)
		run(t, dir, "tar", "-xf", ball, "-C", "tar")
		run(t, dir, "diff", "-r", "--no-dereference", src, filepath.Join(dir, "tar"))
	})
	t.Run("cp-a", func(t *testing.T) {
		run(t, dir, "cp", "-a", src, filepath.Join(dir, "cp"))
		run(t, dir, "diff", "-r", "--no-dereference", src, filepath.Join(dir, "cp"))
		a, _ := os.Stat(filepath.Join(src, "fuse", "doc.go"))
		b, _ := os.Stat(filepath.Join(dir, "cp", "fuse", "doc.go"))
		if a == nil || b == nil || !a.ModTime().Equal(b.ModTime()) || a.Mode() != b.Mode() {
			t.Fatalf("cp -a did not keep mtime/mode: %v %v", a, b)
		}
	})
	t.Run("rsync", func(t *testing.T) {
		run(t, dir, "rsync", "-a", src+"/", filepath.Join(dir, "rsync")+"/")
		run(t, dir, "diff", "-r", "--no-dereference", src, filepath.Join(dir, "rsync"))
		// a second run finds nothing to transfer (mtimes and sizes kept)
		out := run(t, dir, "rsync", "-ai", src+"/", filepath.Join(dir, "rsync")+"/")
		if strings.Contains(out, ">f") {
			t.Fatalf("rsync re-sent files:\n%s", out)
		}
	})
	t.Run("git", func(t *testing.T) {
		repo := filepath.Join(dir, "repo")
		os.Mkdir(repo, 0o755)
		run(t, repo, "git", "init", "-q", "-b", "main")
		run(t, repo, "cp", "-a", filepath.Join(src, "fuse"), ".")
		run(t, repo, "git", "add", ".")
		run(t, repo, "git", "commit", "-q", "-m", "first")
		os.WriteFile(filepath.Join(repo, "fuse", "new.txt"), []byte("second\n"), 0o644)
		run(t, repo, "git", "add", ".")
		run(t, repo, "git", "commit", "-q", "-m", "second")
		if out := run(t, repo, "git", "log", "--oneline"); strings.Count(out, "\n") != 2 || !strings.Contains(out, "second") {
			t.Fatalf("git log:\n%s", out)
		}
		run(t, repo, "git", "fsck", "--strict")
		if out := run(t, repo, "git", "status", "--porcelain"); out != "" {
			t.Fatalf("git status not clean:\n%s", out)
		}
	})
	t.Run("git-clone-gc", func(t *testing.T) {
		origin := filepath.Join(t.TempDir(), "origin")
		run(t, src, "cp", "-a", src, origin)
		run(t, origin, "git", "init", "-q", "-b", "main")
		run(t, origin, "git", "add", ".")
		run(t, origin, "git", "commit", "-q", "-m", "one")
		run(t, dir, "git", "clone", "-q", "--no-hardlinks", origin, "clone")
		clone := filepath.Join(dir, "clone")
		run(t, clone, "git", "gc", "-q", "--aggressive", "--prune=now")
		run(t, clone, "git", "fsck", "--strict", "--full")
		if out := run(t, clone, "git", "status", "--porcelain"); out != "" {
			t.Fatalf("clone not clean after gc:\n%s", out)
		}
	})
	// `make soak` (TestProgramsSoak) runs the full 100 transactions.
	t.Run("sqlite3", func(t *testing.T) { sqliteInserts(t, dir, 20) })
	t.Run("make", func(t *testing.T) {
		need(t, "make", "cc")
		proj := filepath.Join(dir, "cproj")
		os.Mkdir(proj, 0o755)
		files := map[string]string{
			"Makefile": "prog: main.o util.o\n\tcc -o $@ $^\n%.o: %.c util.h\n\tcc -O2 -c -o $@ $<\n",
			"util.h":   "int square(int);\n",
			"util.c":   "#include \"util.h\"\nint square(int x) { return x * x; }\n",
			"main.c":   "#include <stdio.h>\n#include \"util.h\"\nint main(void) { printf(\"%d\\n\", square(12)); return 0; }\n",
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(proj, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(t, proj, "make", "-s")
		if out := run(t, proj, "./prog"); out != "144\n" {
			t.Fatalf("prog printed %q", out)
		}
		// make relies on mtimes: touching a source rebuilds only what needs it
		time.Sleep(10 * time.Millisecond)
		now := time.Now()
		os.Chtimes(filepath.Join(proj, "util.c"), now, now)
		if out := run(t, proj, "make"); !strings.Contains(out, "-o util.o") || strings.Contains(out, "-o main.o") {
			t.Fatalf("rebuild after touching util.c:\n%s", out)
		}
	})
	t.Run("cp-a-links", func(t *testing.T) {
		// A tree with symlinks and a hard-linked pair: cp -a keeps both
		// (the namespace has inodes, so link(2) works).
		tree := filepath.Join(t.TempDir(), "links")
		os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
		os.WriteFile(filepath.Join(tree, "sub", "data"), []byte("shared"), 0o644)
		os.Symlink("sub/data", filepath.Join(tree, "rel-link"))
		os.Symlink("/nonexistent/target", filepath.Join(tree, "dangling"))
		if err := os.Link(filepath.Join(tree, "sub", "data"), filepath.Join(tree, "hard")); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "cp", "-a", tree, filepath.Join(dir, "links"))
		if l, err := os.Readlink(filepath.Join(dir, "links", "dangling")); err != nil || l != "/nonexistent/target" {
			t.Fatalf("dangling symlink: %q %v", l, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "links", "rel-link")); err != nil || string(b) != "shared" {
			t.Fatalf("relative symlink: %q %v", b, err)
		}
		wantLinks(t, 2, filepath.Join(dir, "links", "hard"), filepath.Join(dir, "links", "sub", "data"))
	})

	// All of it is in the volume: a fresh mount (another client) sees the
	// same trees, repository and database.
	unmount(t, mt)
	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	for _, d := range []string{"tar", "cp", "rsync"} {
		if _, err := os.Stat(filepath.Join(dir2, d)); err != nil {
			continue // its subtest was skipped or failed
		}
		run(t, dir2, "diff", "-r", "--no-dereference", src, filepath.Join(dir2, d))
	}
	if _, err := os.Stat(filepath.Join(dir2, "links", "hard")); err == nil {
		wantLinks(t, 2, filepath.Join(dir2, "links", "hard"), filepath.Join(dir2, "links", "sub", "data"))
	}
	if _, err := os.Stat(filepath.Join(dir2, "repo")); err == nil {
		run(t, filepath.Join(dir2, "repo"), "git", "fsck", "--strict")
		if out := run(t, filepath.Join(dir2, "repo"), "git", "log", "--oneline"); strings.Count(out, "\n") != 2 {
			t.Fatalf("git log after remount:\n%s", out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir2, "clone")); err == nil {
		run(t, filepath.Join(dir2, "clone"), "git", "fsck", "--strict", "--full")
	}
	if _, err := os.Stat(filepath.Join(dir2, "cproj", "prog")); err == nil {
		if out := run(t, filepath.Join(dir2, "cproj"), "./prog"); out != "144\n" {
			t.Fatalf("prog after remount printed %q", out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir2, "db.sqlite")); err == nil {
		if out := run(t, dir2, "sqlite3", filepath.Join(dir2, "db.sqlite"), "SELECT count(*) FROM t; PRAGMA integrity_check;"); out != "1500\nok\n" {
			t.Fatalf("sqlite3 after remount: %q", out)
		}
	}
}

// testSignalFlush: the serving process gets SIGTERM while a writer still
// has a file open with unflushed data; it flushes, detaches the mount and
// exits once the writer closes; nothing is lost.
func testSignalFlush(t *testing.T, e *env) {
	key, v := e.volume(t)
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	cmd := e.helper(t, key, v.ID(), dir, nil)
	data := randBytes(700 << 10)
	f, err := os.Create(filepath.Join(dir, "open.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "closed.txt"), []byte("closed"), 0o644)
	os.Mkdir(filepath.Join(dir, "fresh-dir"), 0o700) // not committed yet
	cmd.Process.Signal(syscall.SIGTERM)
	// The helper flushes everything, including the open file's data.
	time.Sleep(2 * time.Second)
	more := randBytes(1000)
	if _, err := f.Write(more); err != nil {
		t.Logf("write after SIGTERM: %v", err)
	} else {
		data = append(data, more...)
	}
	f.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("helper exit: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("helper did not exit after SIGTERM and close")
	}
	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{ReadOnly: true})
	if b, _ := os.ReadFile(filepath.Join(dir2, "open.bin")); !bytes.Equal(b, data) {
		t.Fatalf("open.bin after SIGTERM: %d bytes, want %d", len(b), len(data))
	}
	if b, _ := os.ReadFile(filepath.Join(dir2, "closed.txt")); string(b) != "closed" {
		t.Fatal("closed.txt lost")
	}
	if st, err := os.Stat(filepath.Join(dir2, "fresh-dir")); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("fresh-dir: %v %v", st, err)
	}
}

// testKilled: the serving process is SIGKILLed with dirty data. The next
// mount shows the last commit: closed and fsynced data complete, the
// unflushed tail of an open file lost.
func testKilled(t *testing.T, e *env) {
	key, v := e.volume(t)
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	cmd := e.helper(t, key, v.ID(), dir, nil)
	os.WriteFile(filepath.Join(dir, "closed.txt"), []byte("closed"), 0o644)
	v1 := randBytes(300 << 10)
	f, err := os.Create(filepath.Join(dir, "synced.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(v1)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Write(randBytes(200 << 10)) // never flushed
	never, _ := os.Create(filepath.Join(dir, "never.bin"))
	never.Write(randBytes(1000))
	cmd.Process.Kill()
	cmd.Wait()
	f.Close()
	never.Close()
	lazyUnmount(t, dir)

	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{ReadOnly: true})
	if b, _ := os.ReadFile(filepath.Join(dir2, "closed.txt")); string(b) != "closed" {
		t.Fatalf("closed.txt after kill: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir2, "synced.bin")); !bytes.Equal(b, v1) {
		t.Fatalf("synced.bin after kill: %d bytes, want the %d fsynced ones", len(b), len(v1))
	}
	// never.bin: created (a namespace change, committed within CommitDelay
	// as an empty file) but its data was never flushed.
	if b, err := os.ReadFile(filepath.Join(dir2, "never.bin")); err == nil && len(b) != 0 {
		t.Fatalf("never.bin has %d bytes of unflushed data", len(b))
	}
}

// testUnprivileged mounts through fusermount3 as an unprivileged user.
func testUnprivileged(t *testing.T, e *env) {
	need(t, "fusermount3")
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	if st, err := os.Stat("/dev/fuse"); err != nil || st.Mode().Perm()&0o006 != 0o006 {
		// fusermount3 opens the device with the user's file-system uid.
		if os.Getenv("CBFS_FUSE_CHMOD_DEV") == "" {
			t.Skip("/dev/fuse is not 0666 (the udev default) here; set CBFS_FUSE_CHMOD_DEV=1 to make it so for this test")
		}
		if err := os.Chmod("/dev/fuse", 0o666); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod("/dev/fuse", st.Mode().Perm()) })
	}
	key, v := e.volume(t)
	base, err := os.MkdirTemp("", "cbfs-unpriv-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "mnt")
	cache := filepath.Join(base, "cache")
	for _, d := range []string{dir, cache} {
		os.Mkdir(d, 0o755)
		os.Chown(d, 65534, 65534)
	}
	// The test binary must be reachable by the user.
	bin := filepath.Join(base, "fuse.test")
	run(t, base, "cp", os.Args[0], bin)
	os.Chmod(bin, 0o755)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=serve", "CBFS_SELFTEST=1", "CBFS_KEY="+hexKey(key),
		"CBFS_VOLUME="+v.ID().String(), "CBFS_URL="+e.url, "CBFS_DIR="+dir, "CBFS_CACHE="+cache, "HOME="+base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { lazyUnmount(t, dir) })
	if err != nil {
		t.Fatalf("unprivileged mount: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("READY")) {
		t.Fatalf("no READY:\n%s", out)
	}
	b := new(bytes.Buffer)
	if _, err := v.Get(context.Background(), "/selftest.txt", b); err != nil || b.String() != "written by uid 65534" {
		t.Fatalf("file written by the unprivileged mount: %q %v", b, err)
	}
	man, _ := v.Manifest(context.Background())
	if i := man.Lookup("/selftest.txt"); i < 0 || man.Files[i].UID != 65534 {
		t.Fatal("owner of the file is not the unprivileged user")
	}
}

// sqliteInserts makes a database of txs transactions of 100 inserts each
// (every COMMIT fsyncs the database and its rollback journal, which is
// created and deleted each time; every fsync is a commit), updates and
// deletes rows, and checks the result and PRAGMA integrity_check. It leaves
// 75 rows per transaction.
func sqliteInserts(t *testing.T, dir string, txs int) {
	db := filepath.Join(dir, "db.sqlite")
	var sql strings.Builder
	sql.WriteString("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\n")
	for tx := 0; tx < txs; tx++ {
		sql.WriteString("BEGIN;\n")
		for i := 0; i < 100; i++ {
			sql.WriteString("INSERT INTO t(v) VALUES (hex(randomblob(32)));\n")
		}
		sql.WriteString("COMMIT;\n")
	}
	cmd := exec.Command("sqlite3", db)
	cmd.Stdin = strings.NewReader(sql.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	rows, kept := txs*100, txs*75
	if out := run(t, dir, "sqlite3", db, "SELECT count(*) FROM t;"); out != fmt.Sprintf("%d\n", rows) {
		t.Fatalf("sqlite3 rows: %q", out)
	}
	run(t, dir, "sqlite3", db, fmt.Sprintf("UPDATE t SET v = 'x' WHERE id %% 2 = 0; DELETE FROM t WHERE id > %d;", kept))
	if out := run(t, dir, "sqlite3", db, "SELECT count(*), sum(v = 'x') FROM t; PRAGMA integrity_check;"); out != fmt.Sprintf("%d|%d\nok\n", kept, kept/2) {
		t.Fatalf("sqlite3 query: %q", out)
	}
}
