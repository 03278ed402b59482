package netem

import (
	"encoding/binary"
	"hash/maphash"
)

// IPv4 is what the emulator reads from a packet's IPv4 header.
type IPv4 struct {
	Src, Dst [4]byte
	Proto    uint8
	TOS      uint8 // DSCP and ECN bits
	HdrLen   int   // header length in bytes (IHL·4)
	TotalLen int
}

// ECN codepoints (the low two bits of TOS).
const (
	ecnMask = 0x03
	ecnCE   = 0x03
)

// ParseIPv4 reads b's IPv4 header; ok is false for anything that is not a
// well-formed IPv4 packet (IPv6, short or inconsistent headers), which the
// emulator forwards without classification.
func ParseIPv4(b []byte) (h IPv4, ok bool) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return h, false
	}
	h.HdrLen = int(b[0]&0x0f) * 4
	h.TotalLen = int(binary.BigEndian.Uint16(b[2:4]))
	if h.HdrLen < 20 || h.HdrLen > len(b) || h.TotalLen < h.HdrLen || h.TotalLen > len(b) {
		return h, false
	}
	h.TOS, h.Proto = b[1], b[9]
	copy(h.Src[:], b[12:16])
	copy(h.Dst[:], b[16:20])
	return h, true
}

// ECT reports whether the packet's transport is ECN-capable (ECT(0), ECT(1)
// or already CE), the packets a marking link may mark.
func (h IPv4) ECT() bool { return h.TOS&ecnMask != 0 }

// CE reports whether the packet carries Congestion Experienced.
func (h IPv4) CE() bool { return h.TOS&ecnMask == ecnCE }

// markCE sets CE in b's header (which ParseIPv4 accepted) and updates the
// header checksum incrementally (RFC 1624), so the next hop accepts it.
func markCE(b []byte) {
	old := binary.BigEndian.Uint16(b[0:2])
	b[1] |= ecnCE
	updateChecksum(b, old, binary.BigEndian.Uint16(b[0:2]))
}

// updateChecksum applies RFC 1624's HC' = ~(~HC + ~m + m') for one 16-bit
// word of the header changing from old to new.
func updateChecksum(b []byte, old, new uint16) {
	sum := uint32(^binary.BigEndian.Uint16(b[10:12])) + uint32(^old) + uint32(new)
	sum = (sum & 0xffff) + sum>>16
	sum = (sum & 0xffff) + sum>>16
	binary.BigEndian.PutUint16(b[10:12], ^uint16(sum))
}

// headerChecksum computes the IPv4 header checksum of hdr with its checksum
// field taken as zero.
func headerChecksum(hdr []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(hdr); i += 2 {
		if i == 10 {
			continue
		}
		sum += uint32(binary.BigEndian.Uint16(hdr[i:]))
	}
	for sum>>16 != 0 {
		sum = (sum & 0xffff) + sum>>16
	}
	return ^uint16(sum)
}

var hashSeed = maphash.MakeSeed()

// Hash identifies a packet across the links it crosses: it covers every byte
// except those a hop changes — the TTL, the header checksum and the ECN bits.
func Hash(b []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	if len(b) < 20 {
		_, _ = h.Write(b)
		return h.Sum64()
	}
	var hdr [20]byte
	copy(hdr[:], b[:20])
	hdr[1] &^= ecnMask
	hdr[8] = 0
	hdr[10], hdr[11] = 0, 0
	_, _ = h.Write(hdr[:])
	_, _ = h.Write(b[20:])
	return h.Sum64()
}
