package p2p

import (
	"context"
	"errors"
	"net"
	"net/netip"
)

// Node discovery (chain/consensus/p2p/discovery) runs on the transport's
// UDP socket. quic-go hands a packet to ReadNonQUICPacket only when the two
// high bits of its first byte are clear; a discv5 packet starts with a
// random masking IV, so PacketConn prefixes every discovery packet with one
// zero byte and strips it on receipt. Packets without it are dropped.

const discoveryPrefix = 0x00

// PacketConn carries discovery packets over the transport's socket. It
// implements go-ethereum's discover.UDPConn. Close stops its reads only;
// the socket belongs to the transport.
type PacketConn struct {
	t      *Transport
	ctx    context.Context
	cancel context.CancelFunc
}

// PacketConn returns a connection for discovery packets on the transport's
// socket. Only one should be read from at a time.
func (t *Transport) PacketConn() *PacketConn {
	ctx, cancel := context.WithCancel(t.ctx)
	return &PacketConn{t: t, ctx: ctx, cancel: cancel}
}

// ReadFromUDPAddrPort reads the next discovery packet.
func (c *PacketConn) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	buf := make([]byte, len(b)+1)
	for {
		n, from, err := c.t.qt.ReadNonQUICPacket(c.ctx, buf)
		if err != nil {
			return 0, netip.AddrPort{}, errors.Join(net.ErrClosed, err)
		}
		ua, ok := from.(*net.UDPAddr)
		if n < 1 || buf[0] != discoveryPrefix || !ok {
			continue
		}
		return copy(b, buf[1:n]), ua.AddrPort(), nil
	}
}

// WriteToUDPAddrPort sends a discovery packet.
func (c *PacketConn) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	n, err := c.t.qt.WriteTo(append([]byte{discoveryPrefix}, b...), net.UDPAddrFromAddrPort(to))
	return max(n-1, 0), err
}

// Close ends pending and future reads.
func (c *PacketConn) Close() error {
	c.cancel()
	return nil
}

// LocalAddr is the transport's socket address.
func (c *PacketConn) LocalAddr() net.Addr { return c.t.udp.LocalAddr() }
