package udpbatch

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
)

// BenchmarkFanout writes one 1200-byte datagram to each of n destinations, as the SFU does for one
// publisher packet: one sendto per datagram (direct) against one sendmmsg for all (held). The
// destinations are sockets that are never read; the kernel drops what overflows their buffers.
// The marked runs write RTP packets with a DSCP each (a control message per datagram).
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{8, 32} {
		for _, mode := range []struct{ held, marked bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			held := mode.held
			name := fmt.Sprintf("subscribers=%d/held=%v", n, held)
			if mode.marked {
				name += "/marked"
			}
			b.Run(name, func(b *testing.B) {
				c := newConn(b, "udp4", "127.0.0.1:0")
				var marks Marks
				c.SetMarks(&marks)
				dsts := make([]netip.AddrPort, n)
				for i := range dsts {
					d := listen(b, "udp4", "127.0.0.1:0")
					dsts[i] = d.LocalAddr().(*net.UDPAddr).AddrPort()
				}
				pkt := packet(1, 1200)
				if mode.marked {
					pkt[0], pkt[1] = 0x80, 96 // RTP, SSRC 0, sequence 0
					marks.Mark(0, 0, 38)
				}
				b.SetBytes(int64(n * len(pkt)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if held {
						c.Hold()
					}
					for _, d := range dsts {
						_, _ = c.WriteToAddrPort(pkt, d)
					}
					if held {
						c.Release()
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/datagram")
			})
		}
	}
}
