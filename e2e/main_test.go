// Package e2e holds end-to-end tests that build the real binaries and run
// them as processes on loopback. Every process a test starts is killed and
// every directory removed when the test ends.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/sdk"
)

// binDir holds the binaries built once for the whole package.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cowboy-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/cowboy", "./cmd/cowboyd", "./cmd/cowboy-runner")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build binaries:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// daemon is a running cowboyd process.
type daemon struct {
	t    testing.TB
	home string
	port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan error
}

func startNode(t testing.TB, home string, port int, interval time.Duration) *daemon {
	t.Helper()
	return startNodeArgs(t, home, port, interval)
}

// startNodeArgs is startNode with extra cowboyd flags.
func startNodeArgs(t testing.TB, home string, port int, interval time.Duration, extra ...string) *daemon {
	t.Helper()
	d := &daemon{t: t, home: home, port: port, log: &bytes.Buffer{}, done: make(chan error, 1)}
	d.cmd = exec.Command(filepath.Join(binDir, "cowboyd"), append([]string{"--dev", "--home", home,
		"--rpc", fmt.Sprintf("127.0.0.1:%d", port), "--block-interval", interval.String(), "--log-level", "warn"}, extra...)...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() { d.kill() })
	c := d.client()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Chain().Status(ctx)
		cancel()
		if err == nil {
			return d
		}
		select {
		case err := <-d.done:
			t.Fatalf("cowboyd exited: %v\n%s", err, d.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("cowboyd did not come up: %v\n%s", err, d.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *daemon) url() string         { return fmt.Sprintf("http://127.0.0.1:%d", d.port) }
func (d *daemon) client() *sdk.Client { return sdk.New(d.url()) }

// kill sends SIGKILL and waits for the process to go.
func (d *daemon) kill() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		d.t.Errorf("cowboyd %d did not die", d.cmd.Process.Pid)
	}
}

// stop sends SIGTERM and requires a clean exit.
func (d *daemon) stop() {
	d.t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Fatalf("cowboyd exited with %v\n%s", err, d.log)
		}
	case <-time.After(10 * time.Second):
		d.t.Fatalf("cowboyd ignored SIGTERM\n%s", d.log)
	}
}

// cli runs the cowboy CLI against d with the given home.
func cli(t testing.TB, d *daemon, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "cowboy"), append([]string{"--node", d.url(), "--home", home}, args...)...)
	cmd.Env = append(os.Environ(), "COWBOY_PASSWORD=e2e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cowboy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
