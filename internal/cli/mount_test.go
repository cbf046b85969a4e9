package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// mountRoot is NewRoot on f with the harness's node and home.
func (h *harness) mountRoot(f *Factory, args ...string) *cobra.Command {
	root := NewRoot(f)
	root.SetArgs(append([]string{"--node", h.url, "--home", h.home}, args...))
	return root
}

func isMounted(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	return strings.Contains(string(b), " "+dir+" ")
}

func TestVolumeMountCommands(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	h := newHarness(t)
	startRelays(t, sdk.New(h.url), 6)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	h.must("volume", "create", "docs")
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })

	// Foreground mount; `volume unmount` ends it after flushing.
	f := NewFactory()
	var out, errOut bytes.Buffer
	f.Out, f.ErrOut = &out, &errOut
	done := make(chan error, 1)
	go func() {
		done <- h.mountRoot(f, "volume", "mount", "docs", dir, "--cache-size", "64M").ExecuteContext(context.Background())
	}()
	for start := time.Now(); !isMounted(dir); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("not mounted after 30s")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello from fuse"), 0o644); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	f2 := NewFactory()
	var out2 bytes.Buffer
	f2.Out, f2.ErrOut = &out2, &out2
	if err := h.mountRoot(f2, "volume", "unmount", dir).Execute(); err != nil {
		t.Fatalf("unmount: %v %s", err, out2.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mount: %v\n%s", err, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("mount command did not return after unmount")
	}
	if !strings.Contains(out.String(), "all data flushed") {
		t.Fatalf("mount output: %s", out.String())
	}
	back := filepath.Join(t.TempDir(), "note.txt")
	h.must("volume", "get", "docs", "note.txt", back)
	if b, _ := os.ReadFile(back); string(b) != "hello from fuse" {
		t.Fatalf("file written through the mount: %q", b)
	}
	if ls := h.must("volume", "ls", "docs"); !strings.Contains(ls, "/sub/") {
		t.Fatalf("ls should mark the directory made through the mount: %s", ls)
	}
	if _, err := h.run("", "volume", "get", "docs", "sub", filepath.Join(t.TempDir(), "x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("get of a directory: %v", err)
	}

	// --read-only, ended by cancellation (what SIGINT does).
	ctx, cancel := context.WithCancel(context.Background())
	f3 := NewFactory()
	var out3 bytes.Buffer
	f3.Out, f3.ErrOut = &out3, &out3
	go func() {
		done <- h.mountRoot(f3, "volume", "mount", "docs", dir, "--read-only").ExecuteContext(ctx)
	}()
	for start := time.Now(); !isMounted(dir); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("not mounted after 30s")
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "note.txt")); string(b) != "hello from fuse" {
		t.Fatalf("read-only mount read: %q", b)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write on read-only mount: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mount: %v\n%s", err, out3.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("mount command did not return after cancel")
	}
	if isMounted(dir) {
		t.Fatal("still mounted")
	}
}
