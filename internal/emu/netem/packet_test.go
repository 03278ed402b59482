package netem

import (
	"encoding/binary"
	"testing"
)

// ipv4Packet builds a UDP-in-IPv4 packet with a valid header checksum.
func ipv4Packet(tos, ttl uint8, payload []byte) []byte {
	b := make([]byte, 28+len(payload))
	b[0], b[1], b[8], b[9] = 0x45, tos, ttl, 17
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	copy(b[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	binary.BigEndian.PutUint16(b[10:], headerChecksum(b[:20]))
	copy(b[28:], payload)
	return b
}

func TestParseIPv4(t *testing.T) {
	p := ipv4Packet(0x02, 64, []byte("hello"))
	h, ok := ParseIPv4(p)
	if !ok || h.Src != [4]byte{10, 0, 0, 1} || h.Dst != [4]byte{10, 0, 0, 2} || h.Proto != 17 || !h.ECT() || h.CE() {
		t.Fatalf("parsed %+v ok=%v", h, ok)
	}
	for _, bad := range [][]byte{nil, p[:19], append([]byte{0x65}, p[1:]...), append([]byte{0x44}, p[1:]...), p[:25]} {
		if _, ok := ParseIPv4(bad); ok {
			t.Fatalf("accepted % x", bad)
		}
	}
}

func TestMarkCEKeepsChecksumValid(t *testing.T) {
	for _, tos := range []uint8{0x01, 0x02, 0xb8 | 0x02, 0xff} {
		p := ipv4Packet(tos, 17, []byte{1, 2, 3})
		markCE(p)
		h, _ := ParseIPv4(p)
		if !h.CE() || h.TOS&^ecnMask != tos&^ecnMask {
			t.Fatalf("tos %#x → %#x", tos, h.TOS)
		}
		if got, want := binary.BigEndian.Uint16(p[10:]), headerChecksum(p[:20]); got != want {
			t.Fatalf("tos %#x: checksum %#x, want %#x", tos, got, want)
		}
	}
}

func TestHashIgnoresWhatHopsChange(t *testing.T) {
	a := ipv4Packet(0x02, 64, []byte("payload"))
	b := ipv4Packet(0x02, 63, []byte("payload"))
	markCE(b)
	if Hash(a) != Hash(b) {
		t.Fatal("TTL, checksum or ECN changed the hash")
	}
	c := ipv4Packet(0x02, 64, []byte("paylоad"))
	if Hash(a) == Hash(c) {
		t.Fatal("different payloads hash alike")
	}
}

func FuzzParseIPv4(f *testing.F) {
	f.Add(ipv4Packet(0x02, 64, []byte("x")))
	f.Add(ipv4Packet(0x03, 1, nil))
	f.Add([]byte{0x4f, 0, 0, 60})
	f.Add([]byte{0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := ParseIPv4(b)
		_ = Hash(b)
		if !ok {
			return
		}
		if h.HdrLen < 20 || h.HdrLen > h.TotalLen || h.TotalLen > len(b) {
			t.Fatalf("accepted inconsistent header %+v of %d bytes", h, len(b))
		}
		c := append([]byte(nil), b...)
		binary.BigEndian.PutUint16(c[10:], headerChecksum(c[:h.HdrLen]))
		markCE(c)
		if binary.BigEndian.Uint16(c[10:]) != headerChecksum(c[:h.HdrLen]) || c[1]&ecnMask != ecnCE {
			t.Fatal("marking broke the checksum")
		}
		if Hash(c) != Hash(b) {
			t.Fatal("marking changed the hash")
		}
	})
}
