//go:build linux && (amd64 || arm64)

package udpbatch

import (
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr on 64-bit Linux: a msghdr and the byte count the kernel fills in.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// batch is a fixed set of slots laid out for sendmmsg(2): each message points at its own copy of
// the datagram and its own destination address, so nothing is allocated per packet.
type batch struct {
	n    int
	msgs [Slots]mmsghdr
	iov  [Slots]unix.Iovec
	sa4  [Slots]unix.RawSockaddrInet4
	sa6  [Slots]unix.RawSockaddrInet6
	bufs [Slots][slotSize]byte
}

func newBatch() *batch { return &batch{} }

// add copies one datagram into the next slot and reports whether the batch is now full. A marked
// datagram's slot points at the shared, read-only control message of its traffic class.
func (b *batch) add(pkt []byte, addr netip.AddrPort, ipv4 bool, dscp uint8) bool {
	i := b.n
	n := copy(b.bufs[i][:], pkt)
	b.iov[i].Base = &b.bufs[i][0]
	b.iov[i].SetLen(n)
	m := &b.msgs[i].hdr
	m.Iov = &b.iov[i]
	m.SetIovlen(1)
	if oob := classOOB(ipv4, addr, dscp); oob != nil {
		m.Control = &oob[0]
		m.SetControllen(len(oob))
	} else {
		m.Control = nil
		m.SetControllen(0)
	}
	port := addr.Port()
	if ipv4 {
		sa := &b.sa4[i]
		sa.Family = unix.AF_INET
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		sa.Addr = addr.Addr().Unmap().As4()
		m.Name = (*byte)(unsafe.Pointer(sa))
		m.Namelen = unix.SizeofSockaddrInet4
	} else {
		sa := &b.sa6[i]
		sa.Family = unix.AF_INET6
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		sa.Addr = addr.Addr().As16()
		m.Name = (*byte)(unsafe.Pointer(sa))
		m.Namelen = unix.SizeofSockaddrInet6
	}
	b.n++
	return b.n == Slots
}

func (b *batch) reset() { b.n = 0 }

// tosOOB and tclassOOB are the control messages that set a datagram's traffic class, one per DSCP
// (the ECN bits stay 0), built once: sendmsg only reads them, so every slot and every direct write
// may point at the same bytes without copying or allocating.
var tosOOB, tclassOOB = classMessages(unix.IPPROTO_IP, unix.IP_TOS), classMessages(unix.IPPROTO_IPV6, unix.IPV6_TCLASS)

func classMessages(level, typ int32) (out [MaxDSCP + 1][]byte) {
	for dscp := 1; dscp <= MaxDSCP; dscp++ {
		b := make([]byte, unix.CmsgSpace(4))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = level, typ
		h.SetLen(unix.CmsgLen(4))
		*(*int32)(unsafe.Pointer(&b[unix.CmsgLen(0)])) = int32(dscp << 2)
		out[dscp] = b
	}
	return out
}

// classOOB is the control message marking a datagram to addr with dscp; nil for 0. An IPv4
// destination, on an IPv6 socket a v4-mapped one, leaves in an IPv4 packet whose class Linux takes
// from IP_TOS (it ignores IPV6_TCLASS there).
func classOOB(ipv4Socket bool, addr netip.AddrPort, dscp uint8) []byte {
	if dscp == 0 || dscp > MaxDSCP {
		return nil
	}
	if ipv4Socket || addr.Addr().Unmap().Is4() {
		return tosOOB[dscp]
	}
	return tclassOOB[dscp]
}

// sender is the state of one flush, kept in the Conn so that the function handed to
// RawConn.Write is a method value made once (a closure per flush would allocate).
type sender struct {
	cur   *batch
	off   int
	sent  int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// sendmmsg runs inside RawConn.Write: false asks the poller to wait until the socket is writable.
func (s *sender) sendmmsg(fd uintptr) bool {
	b := s.cur
	r, _, e := syscall.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.msgs[s.off])), uintptr(b.n-s.off), 0, 0, 0)
	if e == syscall.EAGAIN || e == syscall.EINTR {
		return false
	}
	s.sent, s.errno = int(r), e
	return true
}

// send writes every datagram of b; a datagram the kernel refuses is counted and skipped.
func (c *Conn) send(b *batch) (sent, calls, failed int) {
	s := &c.sender
	if s.fn == nil {
		s.fn = s.sendmmsg
	}
	s.cur, s.off = b, 0
	for s.off < b.n {
		s.sent, s.errno = 0, 0
		if err := c.raw.Write(s.fn); err != nil { // the socket is closed
			return sent, calls, failed + b.n - s.off
		}
		calls++
		if s.errno != 0 {
			failed++
			s.off++
			continue
		}
		sent += s.sent
		s.off += s.sent
	}
	s.cur = nil
	return sent, calls, failed
}
