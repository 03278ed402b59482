//go:build !(linux && (amd64 || arm64))

package udpbatch

import "net/netip"

// classOOB: marks are set on Linux only; elsewhere every datagram keeps the socket's class.
func classOOB(bool, netip.AddrPort, uint8) []byte { return nil }

// batch holds copies of the queued datagrams; without sendmmsg they leave one by one.
type batch struct {
	n     int
	addrs [Slots]netip.AddrPort
	lens  [Slots]int
	bufs  [Slots][slotSize]byte
}

func newBatch() *batch { return &batch{} }

func (b *batch) add(pkt []byte, addr netip.AddrPort, _ bool, _ uint8) bool {
	b.lens[b.n] = copy(b.bufs[b.n][:], pkt)
	b.addrs[b.n] = addr
	b.n++
	return b.n == Slots
}

func (b *batch) reset() { b.n = 0 }

type sender struct{}

func (c *Conn) send(b *batch) (sent, calls, failed int) {
	for i := 0; i < b.n; i++ {
		calls++
		if _, err := c.UDPConn.WriteToUDPAddrPort(b.bufs[i][:b.lens[i]], b.addrs[i]); err != nil {
			failed++
			continue
		}
		sent++
	}
	return sent, calls, failed
}
