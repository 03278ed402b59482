// Package udpbatch sends the datagrams of one fan-out with as few system calls as possible.
//
// An SFU forwarding one publisher packet to N subscribers writes N SRTP packets back to back. When
// every PeerConnection shares one UDP socket (ICE UDP mux), those N writes can leave in one
// sendmmsg(2) call instead of N sendto(2) calls: the profile of a 32-way fan-out showed a third of
// strata's CPU in sendto. Conn wraps that socket. Between Hold and Release (the fan-out loop), its
// writes are copied into fixed slots and sent when the last holder releases or the slots are
// full; outside a hold a write goes straight to the socket, so RTCP, STUN and DTLS are not delayed.
//
// The queue holds no goroutine and no timer: a packet waits at most for the fan-out that queued it
// to end. Send errors of queued packets cannot reach their writer (UDP gives no delivery guarantee
// anyway); they are counted (Stats).
package udpbatch

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
)

// Slots is how many datagrams one sendmmsg call carries at most (the kernel's UIO_MAXIOV is 1024;
// 64 covers a large fan-out of one packet while keeping the copy buffers at 128 KiB per socket).
const Slots = 64

// slotSize is the largest datagram that is queued; larger ones are written directly. An SRTP
// packet of a 1200-byte RTP payload plus auth tag is well under it.
const slotSize = 2048

// Stats counts what the Conn did.
type Stats struct {
	// Direct: datagrams written one by one (outside a hold, or too large for a slot).
	Direct uint64
	// Batched: datagrams sent through sendmmsg; Calls: sendmmsg calls made for them.
	Batched, Calls uint64
	// Errors: queued datagrams the kernel refused (the batch goes on with the next one).
	Errors uint64
}

// Conn is a UDP socket with batched writes. It embeds the socket, so every other method (reads,
// deadlines, buffer sizes, Close) is the socket's own.
type Conn struct {
	*net.UDPConn
	raw   syscall.RawConn
	ipv4  bool   // the socket's family: IPv4 destinations are written as sockaddr_in
	marks *Marks // the DSCP of outgoing RTP packets (nil: every datagram keeps the default class)

	holds atomic.Int32

	mu    sync.Mutex // guards queue
	queue *batch

	flushMu sync.Mutex // serialises flushes; guards spare and sender
	spare   *batch
	sender  sender

	direct, batched, calls, errors atomic.Uint64
}

// New wraps an open UDP socket.
func New(c *net.UDPConn) (*Conn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	ipv4 := false
	if la, ok := c.LocalAddr().(*net.UDPAddr); ok {
		ipv4 = la.IP.To4() != nil
	}
	b := &Conn{UDPConn: c, raw: raw, ipv4: ipv4, queue: newBatch(), spare: newBatch()}
	return b, nil
}

// Hold starts a group of writes that should leave together; every Hold needs one Release.
func (c *Conn) Hold() { c.holds.Add(1) }

// Release ends a group of writes; the last holder out sends what was queued.
func (c *Conn) Release() {
	if c.holds.Add(-1) == 0 {
		c.Flush()
	}
}

// SetMarks makes the socket mark the RTP packets m knows (IP_TOS or IPV6_TCLASS per datagram).
// Call it before the first write.
func (c *Conn) SetMarks(m *Marks) { c.marks = m }

// WriteToAddrPort writes one datagram, or queues it while a hold is open. Pion's ICE UDP mux uses
// this method (with ReadFromAddrPort) for allocation-free I/O.
func (c *Conn) WriteToAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	dscp := c.marks.Of(b)
	if c.holds.Load() == 0 || !c.queueable(b, addr) {
		c.direct.Add(1)
		return c.writeDirect(b, addr, dscp)
	}
	c.mu.Lock()
	for c.queue.n == Slots { // another writer filled it and is about to flush
		c.mu.Unlock()
		c.Flush()
		c.mu.Lock()
	}
	full := c.queue.add(b, addr, c.ipv4, dscp)
	c.mu.Unlock()
	// Flush when the slots are full, or when every holder released while this write was
	// queueing (its Release may have flushed just before the packet arrived).
	if full || c.holds.Load() == 0 {
		c.Flush()
	}
	return len(b), nil
}

// writeDirect writes one datagram now, with its traffic class when it has a mark.
func (c *Conn) writeDirect(b []byte, addr netip.AddrPort, dscp uint8) (int, error) {
	if oob := classOOB(c.ipv4, addr, dscp); oob != nil {
		n, _, err := c.UDPConn.WriteMsgUDPAddrPort(b, oob, addr)
		return n, err
	}
	return c.UDPConn.WriteToUDPAddrPort(b, addr)
}

// queueable: the datagram fits a slot and its address the socket's family (a zoned IPv6
// address needs an interface index lookup: those rare link-local writes go directly).
func (c *Conn) queueable(b []byte, addr netip.AddrPort) bool {
	if len(b) > slotSize || !addr.IsValid() || addr.Addr().Zone() != "" {
		return false
	}
	return c.ipv4 == addr.Addr().Unmap().Is4()
}

// ReadFromAddrPort reads one datagram (Pion's ICE mux looks for this name).
func (c *Conn) ReadFromAddrPort(b []byte) (int, netip.AddrPort, error) {
	return c.UDPConn.ReadFromUDPAddrPort(b)
}

// WriteTo writes one datagram: the net.PacketConn method, for callers without an AddrPort.
func (c *Conn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if ua, ok := addr.(*net.UDPAddr); ok {
		return c.WriteToAddrPort(b, ua.AddrPort())
	}
	c.direct.Add(1)
	return c.UDPConn.WriteTo(b, addr)
}

// Flush sends whatever is queued now.
func (c *Conn) Flush() {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	if c.queue.n == 0 {
		c.mu.Unlock()
		return
	}
	c.queue, c.spare = c.spare, c.queue
	c.mu.Unlock()
	out := c.spare
	sent, calls, failed := c.send(out)
	c.batched.Add(uint64(sent))
	c.calls.Add(uint64(calls))
	c.errors.Add(uint64(failed))
	out.reset()
}

// Stats returns the counters.
func (c *Conn) Stats() Stats {
	return Stats{Direct: c.direct.Load(), Batched: c.batched.Load(), Calls: c.calls.Load(), Errors: c.errors.Load()}
}

// Close sends what is queued and closes the socket.
func (c *Conn) Close() error {
	c.Flush()
	return c.UDPConn.Close()
}
