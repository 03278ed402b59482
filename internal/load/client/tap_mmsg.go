//go:build linux && (amd64 || arm64)

package client

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// recvSlots is how many datagrams one recvmmsg(2) may return: what queued up on the socket while
// the reader was away.
const recvSlots = 32

// oobSize holds one SCM_TIMESTAMPNS control message (a 16-byte header, a 16-byte timespec).
const oobSize = 64

type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// batchReader reads a light receiver's socket with recvmmsg: one system call and one wake-up
// for every datagram that queued up, instead of one each, the more the busier the machine. Each
// datagram's arrival time is the kernel's receive timestamp (SO_TIMESTAMPNS), so a reader that
// was late (descheduled on a busy machine) shifts no measurement: jitter, audio lateness and the
// transport-wide feedback see when the packet arrived, not when it was read. It is used by the
// socket's single reader (ICE's read loop), so it needs no lock.
type batchReader struct {
	raw   syscall.RawConn
	read  func(fd uintptr) bool // the method value, made once
	msgs  [recvSlots]mmsghdr
	iov   [recvSlots]unix.Iovec
	names [recvSlots]unix.RawSockaddrInet4
	oob   [recvSlots][oobSize]byte
	bufs  [recvSlots][1600]byte
	n     int // datagrams in the batch
	next  int // the next one to look at
	errno syscall.Errno
	// realOffset converts the kernel's wall-clock timestamps to the run's clock: wall-clock
	// nanoseconds at the run's zero, measured after each read.
	realOffset int64
}

func newBatchReader(c *net.UDPConn) *batchReader {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		sockErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || sockErr != nil {
		return nil
	}
	r := &batchReader{raw: raw}
	for i := range r.msgs {
		r.iov[i].Base = &r.bufs[i][0]
		r.iov[i].SetLen(len(r.bufs[i]))
		h := &r.msgs[i].hdr
		h.Iov = &r.iov[i]
		h.SetIovlen(1)
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
	}
	r.read = r.recvmmsg
	return r
}

// recvmmsg runs inside RawConn.Read: false asks the poller to wait until the socket is readable.
func (r *batchReader) recvmmsg(fd uintptr) bool {
	for i := range r.msgs {
		h := &r.msgs[i].hdr
		h.Namelen = unix.SizeofSockaddrInet4
		h.Flags = 0
		h.Control = &r.oob[i][0]
		h.SetControllen(oobSize)
	}
	n, _, e := syscall.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.msgs[0])), recvSlots, unix.MSG_DONTWAIT, 0, 0)
	if e == syscall.EAGAIN || e == syscall.EINTR {
		return false
	}
	r.errno, r.n, r.next = e, 0, 0
	if e == 0 {
		r.n = int(n)
	}
	return true
}

// readFrom returns the next datagram the tap does not swallow, copied into b.
func (r *batchReader) readFrom(b []byte, t *tap) (int, netip.AddrPort, error) {
	for {
		for r.next < r.n {
			i := r.next
			r.next++
			pkt := r.bufs[i][:r.msgs[i].len]
			if t.swallowAt(pkt, r.arrival(i, t)) {
				continue
			}
			sa := &r.names[i]
			port := *(*[2]byte)(unsafe.Pointer(&sa.Port))
			return copy(b, pkt), netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(port[0])<<8|uint16(port[1])), nil
		}
		if err := r.raw.Read(r.read); err != nil {
			return 0, netip.AddrPort{}, err
		}
		r.realOffset = time.Now().UnixNano() - int64(t.now())
		t.reads.Add(1)
		t.datagrams.Add(uint64(r.n))
		if r.errno != 0 {
			return 0, netip.AddrPort{}, r.errno
		}
	}
}

// arrival is when datagram i reached the socket on the run's clock: its SCM_TIMESTAMPNS, or now
// if the kernel gave none.
func (r *batchReader) arrival(i int, t *tap) time.Duration {
	h := &r.msgs[i].hdr
	oob := r.oob[i][:min(int(h.Controllen), oobSize)]
	for len(oob) >= unix.SizeofCmsghdr {
		l := int(binary.NativeEndian.Uint64(oob))
		level := int32(binary.NativeEndian.Uint32(oob[8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:]))
		if l < unix.SizeofCmsghdr || l > len(oob) {
			break
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && l >= unix.SizeofCmsghdr+16 {
			sec := int64(binary.NativeEndian.Uint64(oob[unix.SizeofCmsghdr:]))
			nsec := int64(binary.NativeEndian.Uint64(oob[unix.SizeofCmsghdr+8:]))
			return time.Duration(sec*1e9 + nsec - r.realOffset)
		}
		oob = oob[(l+7)&^7:]
	}
	return t.now()
}
