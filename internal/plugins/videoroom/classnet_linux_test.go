//go:build linux

package videoroom_test

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"

	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"
	"golang.org/x/sys/unix"
)

// classNet is a client's network whose UDP sockets report the DSCP of every RTP packet they
// receive (IP_RECVTOS; no privileges needed), by SSRC and sequence number: SRTP leaves the RTP
// header in clear, so the marks strata set per packet can be read on the wire.
type classNet struct {
	*stdnet.Net

	mu    sync.Mutex
	marks map[[2]uint32]int
}

func newClassNet() (*classNet, error) {
	n, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return &classNet{Net: n, marks: map[[2]uint32]int{}}, nil
}

// dscp returns the mark the packet (ssrc, seq) arrived with.
func (n *classNet) dscp(ssrc uint32, seq uint16) (int, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, ok := n.marks[[2]uint32{ssrc, uint32(seq)}]
	return d, ok
}

func (n *classNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	raw, err := c.SyscallConn()
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) }); err != nil || serr != nil {
		_ = c.Close()
		return nil, errors.Join(err, serr)
	}
	return &classConn{UDPConn: c, n: n, oob: make([]byte, 64)}, nil
}

func (n *classNet) ListenPacket(network, address string) (net.PacketConn, error) {
	addr, err := net.ResolveUDPAddr(network, address)
	if err != nil {
		return nil, err
	}
	return n.ListenUDP(network, addr)
}

// classConn reads with the packet's traffic class and records it for RTP packets.
type classConn struct {
	*net.UDPConn
	n   *classNet
	oob []byte // Pion reads a socket from one goroutine
}

func (c *classConn) ReadFrom(p []byte) (int, net.Addr, error) {
	k, oobn, _, from, err := c.ReadMsgUDP(p, c.oob)
	if err != nil {
		return k, nil, err
	}
	if k >= 12 && p[0]>>6 == 2 && (p[1] < 192 || p[1] > 223) { // RTP, not RTCP
		if msgs, err := unix.ParseSocketControlMessage(c.oob[:oobn]); err == nil {
			for _, m := range msgs {
				if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) > 0 {
					key := [2]uint32{binary.BigEndian.Uint32(p[8:12]), uint32(binary.BigEndian.Uint16(p[2:4]))}
					c.n.mu.Lock()
					c.n.marks[key] = int(m.Data[0] >> 2)
					c.n.mu.Unlock()
				}
			}
		}
	}
	return k, from, nil
}

func (c *classConn) Read(p []byte) (int, error) {
	n, _, err := c.ReadFrom(p)
	return n, err
}

func (c *classConn) ReadFromUDP(p []byte) (int, *net.UDPAddr, error) {
	n, from, err := c.ReadFrom(p)
	if err != nil {
		return n, nil, err
	}
	return n, from.(*net.UDPAddr), nil
}
