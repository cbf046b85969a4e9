package netns

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newLab(t *testing.T, n int, link Link) *Lab {
	t.Helper()
	if err := Sweep(); err != nil {
		t.Logf("sweep: %v", err)
	}
	l, err := New(n, link, nil)
	if l != nil {
		t.Cleanup(func() {
			if err := l.Close(); err != nil {
				t.Errorf("close lab: %v", err)
			}
		})
	}
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("skipping the network-namespace test: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// echo serves one line back per connection on host i.
func echo(t *testing.T, l *Lab, i int) string {
	t.Helper()
	ln, err := l.Listen(i, "tcp", HostAddr(i).String()+":7000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// rtt times one line's round trip from host from to addr.
func rtt(t *testing.T, l *Lab, from int, addr string, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := l.DialFrom(ctx, from, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	r := bufio.NewReader(c)
	start := time.Now()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	if _, err := r.ReadString('\n'); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// TestLabShapesPartitionsAndCleansUp: hosts reach each other at 2×delay,
// a partition cuts them both ways and heals, nothing outside the lab is
// reachable, the namespaces have no default route, and Close leaves no
// namespace behind.
func TestLabShapesPartitionsAndCleansUp(t *testing.T) {
	l := newLab(t, 3, Link{Delay: 25 * time.Millisecond})
	addr := echo(t, l, 1)
	d, err := rtt(t, l, 0, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d < 50*time.Millisecond || d > 400*time.Millisecond {
		t.Fatalf("round trip %v at 25 ms each way, want ≥ 50 ms", d)
	}
	t.Logf("round trip h0→h1 %v (25 ms one-way)", d)

	l.Isolate(1)
	if _, err := rtt(t, l, 0, addr, 700*time.Millisecond); err == nil {
		t.Fatal("h1 reachable from h0 while isolated")
	}
	if _, err := rtt(t, l, 2, addr, 700*time.Millisecond); err == nil {
		t.Fatal("h1 reachable from h2 while isolated")
	}
	l.Heal()
	if _, err := rtt(t, l, 2, addr, 5*time.Second); err != nil {
		t.Fatalf("after heal: %v", err)
	}

	// Only the lab's subnet is routed; other addresses go nowhere.
	out, err := exec.Command("ip", "-n", l.Host(0).NS, "route", "show").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "default") || !strings.Contains(string(out), "10.250.0.0/24") {
		t.Fatalf("routes in %s:\n%s", l.Host(0).NS, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if c, err := l.DialFrom(ctx, 0, "tcp", "192.0.2.1:80"); err == nil {
		c.Close()
		t.Fatal("dialled an address outside the lab")
	}
	if _, err := rtt(t, l, 0, "10.250.0.99:7000", 500*time.Millisecond); err == nil {
		t.Fatal("reached a lab address no host has")
	}

	// Close removes every namespace, even with a process still inside.
	sleeper := l.Command(2, "sleep", "60")
	exited, err := l.Start(sleeper)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{l.Host(0).NS, l.Host(1).NS, l.Host(2).NS}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range names {
		if _, err := os.Stat(netnsDir + "/" + ns); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s left behind (%v)", ns, err)
		}
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Error("process in the lab exited cleanly instead of being killed")
		}
	case <-time.After(5 * time.Second):
		t.Error("process in the lab survived Close")
	}
}

// TestLabLoss drops about the configured share of packets.
func TestLabLoss(t *testing.T) {
	l := newLab(t, 2, Link{Loss: 0.3})
	var pc net.PacketConn
	if err := inNS(l.Host(1).NS, func() error {
		var err error
		pc, err = net.ListenPacket("udp", HostAddr(1).String()+":7001")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c, err := l.DialFrom(context.Background(), 0, "udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const sent = 1000
	// Read while sending: a socket buffer holds only a few hundred datagrams.
	gotc := make(chan int)
	go func() {
		got := 0
		buf := make([]byte, 16)
		for {
			_ = pc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			if _, _, err := pc.ReadFrom(buf); err != nil {
				gotc <- got
				return
			}
			got++
		}
	}()
	for i := range sent {
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if i%20 == 19 {
			time.Sleep(2 * time.Millisecond) // stay within the TUN queue
		}
	}
	got := <-gotc
	t.Logf("%d of %d datagrams arrived at 30%% loss", got, sent)
	if got < 600 || got > 800 {
		t.Fatalf("%d of %d datagrams arrived at 30%% loss", got, sent)
	}
}

// TestSweepRemovesLeftovers: a namespace named for a process that no
// longer runs is deleted by Sweep, and a process left inside it killed;
// one named for a running process is kept.
func TestSweepRemovesLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: network namespaces need root")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := Prefix + strconv.Itoa(gone.Process.Pid) + "-sweep-h0"
	live := Prefix + strconv.Itoa(os.Getppid()) + "-sweep-h0"
	for _, ns := range []string{stale, live} {
		if err := ip("netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = removeNS(ns) })
	}
	left := exec.Command("ip", "netns", "exec", stale, "sleep", "60")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(nsPids(stale)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("sleep never entered the namespace")
		}
	}
	if err := Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(netnsDir + "/" + stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale namespace %s kept (%v)", stale, err)
	}
	if _, err := os.Stat(netnsDir + "/" + live); err != nil {
		t.Errorf("namespace of a running process removed: %v", err)
	}
	if err := left.Wait(); err == nil {
		t.Error("process in a stale namespace survived Sweep")
	}
}
