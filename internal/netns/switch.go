package netns

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openTUN creates a TUN device (IP packets, no packet info header) in the
// calling thread's network namespace. It disappears when the file closes.
func openTUN(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, err)
	}
	// Non-blocking, so the runtime poller serves reads and Close ends them.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "tun:"+name), nil
}

// readLoop takes the packets host h sends and queues each for its
// destination host after the link's delay, unless the link loses it, a
// partition cuts the pair, or the destination is not a lab host (then it
// goes nowhere: the lab has no way out).
func (l *Lab) readLoop(h *Host) {
	defer l.wg.Done()
	buf := make([]byte, 1<<16)
	for {
		n, err := h.tun.Read(buf)
		if err != nil {
			return
		}
		if n < 20 || buf[0]>>4 != 4 {
			continue // IPv4 only: the lab has no IPv6 addresses
		}
		dst := l.hostOf(netip.AddrFrom4([4]byte(buf[16:20])))
		if dst == nil || dst == h {
			continue
		}
		l.mu.Lock()
		link, cut := l.link, l.cut[[2]int{h.Index, dst.Index}]
		l.mu.Unlock()
		if cut || (link.Loss > 0 && rand.Float64() < link.Loss) {
			continue
		}
		p := packet{at: time.Now().Add(link.Delay), b: append([]byte(nil), buf[:n]...)}
		select {
		case dst.out <- p:
		default: // queue full: dropped, as a full qdisc would
		}
	}
}

// writeLoop delivers the packets queued for h when their time comes. The
// delay is the same for every packet in flight, so the queue is in
// delivery order.
func (l *Lab) writeLoop(h *Host) {
	defer l.wg.Done()
	for {
		select {
		case <-l.ctx.Done():
			return
		case p := <-h.out:
			if d := time.Until(p.at); d > 0 {
				select {
				case <-time.After(d):
				case <-l.ctx.Done():
					return
				}
			}
			if _, err := h.tun.Write(p.b); err != nil {
				return
			}
		}
	}
}
