//go:build linux && (amd64 || arm64)

package udpbatch

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rtpPacket is a minimal RTP packet (version 2, payload type 96) with the given SSRC and sequence.
func rtpPacket(ssrc uint32, seq uint16, size int) []byte {
	p := make([]byte, size)
	p[0], p[1] = 0x80, 96
	binary.BigEndian.PutUint16(p[2:], seq)
	binary.BigEndian.PutUint32(p[8:], ssrc)
	return p
}

// listenClass opens a receiving socket that reports each datagram's traffic class (IP_RECVTOS,
// and IPV6_RECVTCLASS on IPv6 sockets): no privileges are needed.
func listenClass(t *testing.T, network, addr string) *net.UDPConn {
	t.Helper()
	c := listen(t, network, addr)
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		if network == "udp6" {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
			return
		}
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
	})
	if err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return c
}

// classed is one received datagram: its sequence number (RTP) and the DSCP it arrived with.
type classed struct {
	seq  uint16
	dscp int
}

// readClassed reads n datagrams with their DSCP (-1: no class reported).
func readClassed(t *testing.T, c *net.UDPConn, n int) []classed {
	t.Helper()
	buf, oob := make([]byte, 4096), make([]byte, 256)
	var out []classed
	for len(out) < n {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		k, oobn, _, _, err := c.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			t.Fatalf("after %d of %d datagrams: %v", len(out), n, err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			t.Fatal(err)
		}
		got := classed{seq: binary.BigEndian.Uint16(buf[2:k]), dscp: -1}
		for _, m := range msgs {
			switch {
			case m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) >= 1:
				got.dscp = int(m.Data[0] >> 2)
			case m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_TCLASS && len(m.Data) >= 4:
				got.dscp = int(binary.NativeEndian.Uint32(m.Data) >> 2)
			}
		}
		out = append(out, got)
	}
	return out
}

// TestMarksOnTheWire sends RTP packets with a mark per packet, held (sendmmsg) and direct, and
// reads their class back on a receiving socket: IPv4, IPv6, and a dual-stack socket writing to an
// IPv4 subscriber (v4-mapped: the class must come from IP_TOS).
func TestMarksOnTheWire(t *testing.T) {
	for _, tc := range []struct{ name, network, addr, dstNetwork, dstAddr string }{
		{"ipv4", "udp4", "127.0.0.1:0", "udp4", "127.0.0.1:0"},
		{"ipv6", "udp6", "[::1]:0", "udp6", "[::1]:0"},
		{"dual-stack-to-ipv4", "udp", "[::]:0", "udp4", "127.0.0.1:0"},
	} {
		for _, held := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "/held", false: "/direct"}[held], func(t *testing.T) {
				dst := listenClass(t, tc.dstNetwork, tc.dstAddr)
				c := newConn(t, tc.network, tc.addr)
				var m Marks
				c.SetMarks(&m)
				const ssrc = 0x1234abcd
				want := []int{46, 34, 36, 38, 0, 34} // audio, three layers, unmarked, a layer again
				for i, d := range want {
					m.Mark(ssrc, uint16(100+i), uint8(d))
				}
				if held {
					c.Hold()
				}
				for i := range want {
					if _, err := c.WriteToAddrPort(rtpPacket(ssrc, uint16(100+i), 200), addrOf(dst)); err != nil {
						t.Fatal(err)
					}
				}
				// Not marked: another SSRC, and an RTCP packet (payload type 200) of the same numbers.
				_, _ = c.WriteToAddrPort(rtpPacket(ssrc+1, 106, 200), addrOf(dst))
				rtcp := rtpPacket(ssrc, 100, 200)
				rtcp[1] = 200
				binary.BigEndian.PutUint16(rtcp[2:], 107)
				_, _ = c.WriteToAddrPort(rtcp, addrOf(dst))
				if held {
					c.Release()
				}
				got := readClassed(t, dst, len(want)+2)
				want = append(want, 0, 0)
				for i, g := range got {
					if g.seq != uint16(100+i) || g.dscp != want[i] {
						t.Errorf("datagram %d: seq %d dscp %d, want seq %d dscp %d", i, g.seq, g.dscp, 100+i, want[i])
					}
				}
				s := c.Stats()
				if held && tc.name != "dual-stack-to-ipv4" && (s.Batched != uint64(len(want)) || s.Direct != 0) {
					t.Errorf("stats %+v: want every datagram batched", s)
				}
				if !held && s.Direct != uint64(len(want)) {
					t.Errorf("stats %+v: want every datagram direct", s)
				}
			})
		}
	}
}

// The mark of a packet the table no longer holds (another packet took its slot) is none.
func TestMarksForgetOverwrittenSlots(t *testing.T) {
	var m Marks
	m.Mark(1, 2, 34)
	if got := m.Lookup(1, 2); got != 34 {
		t.Fatalf("Lookup = %d, want 34", got)
	}
	if got := m.Lookup(1, 3); got != 0 {
		t.Fatalf("Lookup of an unmarked packet = %d", got)
	}
	// Find another key on the same slot and overwrite.
	for seq := uint16(0); ; seq++ {
		if slot(9, seq) == slot(1, 2) {
			m.Mark(9, seq, 38)
			break
		}
		if seq == 65535 {
			t.Fatal("no sequence number of SSRC 9 shares the slot") // 2^16 keys on 2^14 slots: impossible
		}
	}
	if got := m.Lookup(1, 2); got != 0 {
		t.Fatalf("overwritten mark = %d, want 0", got)
	}
	m.Mark(1, 2, 0)
	if got := m.Lookup(1, 2); got != 0 {
		t.Fatalf("mark 0 = %d", got)
	}
}
