package pvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// findCallChild returns the pid of a running call child (uid 200000+pid).
func findCallChild() (int, bool) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		// The spinning child is running; a finished warm-up child may still be exiting.
		if strings.Contains(string(st), fmt.Sprintf("\nUid:\t%d\t", 200000+pid)) && strings.Contains(string(st), "State:\tR") {
			return pid, true
		}
	}
	return 0, false
}

// TestOSSandbox inspects a live call child from the outside and checks the
// wall-clock safety kill.
func TestOSSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandbox needs root")
	}
	ctx := context.Background()
	e, err := New(ctx, Config{PoolSize: 1, Limits: Limits{WallClock: 10 * time.Second, CPUSeconds: 60}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := actorSrc("while True:\n    pass")
	errc := make(chan error, 1)
	go func() {
		_, err := e.Execute(ctx, &Invocation{Handler: "run", Code: []byte(src), CyclesLimit: 1 << 40, CellsLimit: 1000}, newMemHost())
		errc <- err
	}()
	// Find the spinning child: a running call child that is still there a
	// moment later (a finished warm-up child may be exiting).
	var pid int
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		p, ok := findCallChild()
		if !ok {
			continue
		}
		time.Sleep(200 * time.Millisecond)
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(p), "limits")); err == nil {
			pid = p
			break
		}
	}
	if pid == 0 {
		t.Fatal("no call child found")
	}
	proc := func(name string) string {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), name))
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		return string(b)
	}
	status := proc("status")
	if !strings.Contains(status, "NoNewPrivs:\t1") {
		t.Errorf("no_new_privs not set:\n%s", status)
	}
	if !strings.Contains(status, "Seccomp:\t2") {
		t.Errorf("seccomp filter not installed:\n%s", status)
	}
	root, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "root"))
	if err != nil || root == "/" || !strings.Contains(root, "call-") {
		t.Errorf("child root = %q (%v), want its scratch dir", root, err)
	}
	myNet, _ := os.Readlink("/proc/self/ns/net")
	childNet, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns/net"))
	if childNet == "" || childNet == myNet {
		t.Errorf("child shares the network namespace (%q)", childNet)
	}
	fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if len(fds) != 4 {
		t.Errorf("child has %d open fds, want 4 (stdio + call socket)", len(fds))
	}
	limits := proc("limits")
	for _, want := range []string{"Max address space", "Max processes", "Max file size"} {
		line := ""
		for _, l := range strings.Split(limits, "\n") {
			if strings.HasPrefix(l, want) {
				line = l
			}
		}
		if strings.Contains(line, "unlimited") || line == "" {
			t.Errorf("limit not set: %q", line)
		}
	}
	// The child is not dumpable (uid switch); its environment is the zygote's.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", e.zygotes[0].cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Trim(string(env), "\x00") != "PYTHONHASHSEED=0" {
		t.Errorf("environment = %q", env)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrWallClock) {
			t.Fatalf("want ErrWallClock, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("wall-clock kill did not happen")
	}
	// The engine keeps serving.
	h := newMemHost()
	call(t, e, h, plainCounter, "", nil, true)
	if got := decodeRet(t, call(t, e, h, plainCounter, "increment", nil, false)); got != uint64(1) {
		t.Fatalf("after kill: %v", got)
	}
}

// Files in /tmp are private to one call.
func TestTmpIsPerCall(t *testing.T) {
	e := engine(t)
	src := `
class Actor:
    def write(self):
        with open("/tmp/secret", "w") as f:
            f.write("hunter2")
        with open("/tmp/secret") as f:
            return f.read()
    def read(self):
        with open("/tmp/secret") as f:
            return f.read()
`
	h := newMemHost()
	if got := decodeRet(t, call(t, e, h, src, "write", nil, false)); got != "hunter2" {
		t.Fatalf("write = %v", got)
	}
	out := call(t, e, h, src, "read", nil, false)
	if out.Err == nil || !strings.Contains(out.Err.Message, "FileNotFoundError") {
		t.Fatalf("read of another call's file: %+v %x", out.Err, out.Return)
	}
}

// Without the OS sandbox (non-root hosts) the Python-level isolation and
// metering still work.
func TestNoSandbox(t *testing.T) {
	e, err := New(context.Background(), Config{PoolSize: 1, NoSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := newMemHost()
	call(t, e, h, plainCounter, "", nil, true)
	if got := decodeRet(t, call(t, e, h, plainCounter, "increment", nil, false)); got != uint64(1) {
		t.Fatalf("increment = %v", got)
	}
	src := `
class Actor:
    def write(self):
        with open("/tmp/x", "w") as f:
            f.write("data")
        with open("/tmp/x") as f:
            return f.read()
`
	if got := decodeRet(t, call(t, e, h, src, "write", nil, false)); got != "data" {
		t.Fatalf("tmp round trip = %v", got)
	}
	out := call(t, e, h, actorSrc("while True:\n    pass"), "run", nil, false)
	if out.Err == nil || out.Err.Kind != OutOfCycles {
		t.Fatalf("spin: %+v", out.Err)
	}
}
