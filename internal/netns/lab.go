// Package netns builds a lab of Linux network namespaces for multi-host
// tests on one machine: one namespace per host, each with a single
// interface eth0 carrying an address from Subnet, joined by a switch that
// delays, drops and partitions packets. The lab owns Subnet only inside its
// namespaces: no interface of the root namespace takes part, no namespace
// has a default route, there is no NAT, and the switch forwards only to
// the lab's own hosts, so nothing leaves the lab.
//
// The switch runs in the test process over TUN devices rather than as a
// kernel bridge with tc netem, because the kernels the tests run on
// (Firecracker guests) are built without sch_netem and without tc
// classifiers; TUN needs only /dev/net/tun. Its behaviour matches netem on
// each host's egress: every packet a host sends waits Link.Delay and is
// lost with probability Link.Loss, so two hosts see an RTT of 2×Delay.
//
// Every namespace and process a lab creates is removed by Close, and
// Sweep removes what a killed test process left behind (namespace names
// carry the creating pid).
package netns

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Subnet is the range the lab owns; host i is HostAddr(i). It exists only
// on the TUN devices inside the lab's namespaces.
const Subnet = "10.250.0.0/24"

// HostAddr is the address of host i (10.250.0.10 + i).
func HostAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 250, 0, byte(10 + i)}) }

// Prefix starts every namespace name a lab creates: Prefix<pid>-<id>-h<i>.
const Prefix = "cbnet"

const netnsDir = "/var/run/netns"

// ErrUnsupported is returned by New when this process cannot build a lab:
// not root, no iproute2, or no /dev/net/tun.
var ErrUnsupported = errors.New("netns: network namespaces need root, iproute2 (ip) and /dev/net/tun")

// Link shapes every packet a host sends: a one-way delay and a loss
// probability in [0, 1].
type Link struct {
	Delay time.Duration
	Loss  float64
}

// Lab is a set of hosts joined by the switch.
type Lab struct {
	id    string
	log   *slog.Logger
	hosts []*Host
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup

	mu    sync.Mutex
	link  Link
	cut   map[[2]int]bool // host pairs that cannot reach each other
	procs []proc
	done  bool
}

// proc is a process started in the lab and the channel its exit lands on
// (buffered, read by at most one of Close and the caller).
type proc struct {
	cmd    *exec.Cmd
	exited chan error
}

// Host is one namespace of the lab.
type Host struct {
	Index int
	NS    string     // namespace name, for `ip netns exec`
	Addr  netip.Addr // its address on eth0
	tun   *os.File
	out   chan packet
}

type packet struct {
	at time.Time
	b  []byte
}

// New creates n hosts shaped by link. Call Close when done; on error New
// has already removed what it created.
func New(n int, link Link, log *slog.Logger) (*Lab, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: running as uid %d", ErrUnsupported, os.Geteuid())
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if n < 1 || n > 200 {
		return nil, fmt.Errorf("netns: %d hosts, want 1..200", n)
	}
	if log == nil {
		log = slog.Default()
	}
	var rb [3]byte
	_, _ = rand.Read(rb[:])
	ctx, stop := context.WithCancel(context.Background())
	l := &Lab{id: Prefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rb[:]), log: log, ctx: ctx, stop: stop, link: link, cut: map[[2]int]bool{}}
	for i := range n {
		if err := l.addHost(i); err != nil {
			return nil, errors.Join(fmt.Errorf("netns: host %d: %w", i, err), l.Close())
		}
	}
	for _, h := range l.hosts {
		l.wg.Add(2)
		go l.readLoop(h)
		go l.writeLoop(h)
	}
	return l, nil
}

func (l *Lab) addHost(i int) error {
	h := &Host{Index: i, NS: fmt.Sprintf("%s-h%d", l.id, i), Addr: HostAddr(i), out: make(chan packet, 4096)}
	if err := ip("netns", "add", h.NS); err != nil {
		return err
	}
	l.mu.Lock()
	l.hosts = append(l.hosts, h)
	l.mu.Unlock()
	if err := inNS(h.NS, func() error {
		f, err := openTUN("eth0")
		h.tun = f
		return err
	}); err != nil {
		return fmt.Errorf("create eth0: %w", err)
	}
	for _, args := range [][]string{
		{"-n", h.NS, "link", "set", "lo", "up"},
		{"-n", h.NS, "addr", "add", h.Addr.String() + "/24", "dev", "eth0"},
		{"-n", h.NS, "link", "set", "eth0", "up"},
	} {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// Hosts returns the lab's hosts, by index.
func (l *Lab) Hosts() []*Host { return l.hosts }

// Host returns host i.
func (l *Lab) Host(i int) *Host { return l.hosts[i] }

// SetLink changes the shaping of every host's traffic.
func (l *Lab) SetLink(link Link) {
	l.mu.Lock()
	l.link = link
	l.mu.Unlock()
}

// Partition cuts every host in a off from every host in b, both ways.
// Each host still reaches itself and the others of its side.
func (l *Lab) Partition(a, b []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			l.cut[[2]int{x, y}], l.cut[[2]int{y, x}] = true, true
		}
	}
}

// Isolate cuts host i off from every other host.
func (l *Lab) Isolate(i int) {
	var rest []int
	for _, h := range l.hosts {
		if h.Index != i {
			rest = append(rest, h.Index)
		}
	}
	l.Partition([]int{i}, rest)
}

// Heal removes every partition.
func (l *Lab) Heal() {
	l.mu.Lock()
	l.cut = map[[2]int]bool{}
	l.mu.Unlock()
}

// Command prepares name args… to run in host i's namespace (through `ip
// netns exec`). The process is killed by Close, and by the kernel if the
// test process dies first.
func (l *Lab) Command(i int, name string, args ...string) *exec.Cmd {
	c := exec.Command("ip", append([]string{"netns", "exec", l.hosts[i].NS, name}, args...)...)
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return c
}

// Start starts c (from Command) and tracks it for Close. The lab waits for
// the process: the caller must not call c.Wait but reads its exit from the
// returned channel.
func (l *Lab) Start(c *exec.Cmd) (<-chan error, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil, errors.New("netns: lab closed")
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	l.procs = append(l.procs, proc{c, exited})
	go func() { exited <- c.Wait() }()
	return exited, nil
}

// DialContext dials addr from inside the namespace of the host that owns
// addr's IP (the connection runs over that host's loopback, unshaped), so
// the test process can reach every host's services, partitioned or not.
func (l *Lab) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("netns: dial %s: not a lab address", addr)
	}
	h := l.hostOf(a)
	if h == nil {
		return nil, fmt.Errorf("netns: dial %s: no lab host has that address", addr)
	}
	return l.DialFrom(ctx, h.Index, network, addr)
}

// DialFrom dials addr from inside host i's namespace: to another host it
// crosses the switch, shaped and subject to partitions.
func (l *Lab) DialFrom(ctx context.Context, i int, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNS(l.hosts[i].NS, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen opens a listener inside host i's namespace.
func (l *Lab) Listen(i int, network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := inNS(l.hosts[i].NS, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// HTTPClient is an HTTP client that reaches lab addresses (DialContext).
func (l *Lab) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.DialContext, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}}
}

func (l *Lab) hostOf(a netip.Addr) *Host {
	for _, h := range l.hosts {
		if h.Addr == a {
			return h
		}
	}
	return nil
}

// Close kills the lab's processes and deletes its namespaces (and with
// them their interfaces). Safe to call more than once.
func (l *Lab) Close() error {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return nil
	}
	l.done = true
	procs := l.procs
	l.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Kill() // fails harmlessly if it already exited
	}
	var errs []error
	for _, h := range l.hosts {
		if err := removeNS(h.NS); err != nil {
			errs = append(errs, err)
		}
	}
	l.stop()
	for _, h := range l.hosts {
		if h.tun != nil {
			h.tun.Close()
		}
	}
	l.wg.Wait()
	return errors.Join(errs...)
}

// Sweep removes the namespaces (and kills their processes) that labs of
// processes no longer running left behind.
func Sweep() error {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), Prefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue // not ours, or its owner still runs
		}
		if err := removeNS(e.Name()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// alive reports whether pid runs; a zombie (killed, not yet reaped) does
// not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S …: the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// removeNS kills every process left in a namespace and deletes it.
func removeNS(ns string) error {
	for range 50 {
		pids := nsPids(ns)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := ip("netns", "del", ns); err != nil {
		if _, serr := os.Stat(netnsDir + "/" + ns); errors.Is(serr, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return nil
}

// nsPids lists the processes in namespace ns, except this one (a thread of
// it may be inside for a moment, in inNS).
func nsPids(ns string) []int {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// inNS runs f on an OS thread switched into namespace ns. Sockets and TUN
// devices f creates stay in ns after it returns. The thread is switched
// back before it is released: a thread that exits would deliver Pdeathsig
// to the processes forked from it (Command). If switching back fails the
// thread stays locked and exits with the goroutine.
func inNS(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open this thread's namespace: %w", err)
			return
		}
		defer unix.Close(orig)
		fd, err := unix.Open(netnsDir+"/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open namespace %s: %w", ns, err)
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		ferr := f()
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}
