package udpbatch

import (
	"encoding/binary"
	"sync/atomic"
)

// MaxDSCP is the largest DiffServ code point (6 bits).
const MaxDSCP = 63

// markSlots is the size of the mark table (a power of two). An entry lives from the moment the
// SFU marks a packet until the packet reaches the socket, a few microseconds through Pion's SRTP
// and ICE; 16384 slots make it unlikely that another packet lands on the same slot meanwhile (the
// packet would then leave with the socket's default class: unmarked, never mismarked).
const markSlots = 1 << 14

// Marks says which DiffServ code point each outgoing RTP packet carries. The SFU decides a
// packet's mark (its layer) before handing it to Pion, which encrypts it and writes it on the ICE
// UDP mux's socket; SRTP leaves the RTP header in clear, so the socket finds the mark again by the
// packet's SSRC and sequence number. RTCP, STUN, DTLS and packets never marked leave with the
// socket's default class.
//
// The table is a direct-mapped array of atomic words: Mark and the lookup neither lock nor
// allocate. Its zero value is ready to use.
type Marks struct {
	slots [markSlots]atomic.Uint64
}

// entry packs one mark: SSRC, sequence number, DSCP, and a bit saying the slot is in use.
func entry(ssrc uint32, seq uint16, dscp uint8) uint64 {
	return uint64(ssrc)<<32 | uint64(seq)<<16 | uint64(dscp&MaxDSCP)<<8 | 1
}

func slot(ssrc uint32, seq uint16) uint64 {
	return (uint64(ssrc)<<16 | uint64(seq)) * 0x9E3779B97F4A7C15 >> (64 - 14)
}

// Mark records the DSCP of the packet (ssrc, seq) about to be written; 0 records it as unmarked,
// which also clears what an older packet of the same numbers may have left.
func (m *Marks) Mark(ssrc uint32, seq uint16, dscp uint8) {
	m.slots[slot(ssrc, seq)].Store(entry(ssrc, seq, dscp))
}

// Lookup returns the DSCP recorded for (ssrc, seq), 0 if none.
func (m *Marks) Lookup(ssrc uint32, seq uint16) uint8 {
	e := m.slots[slot(ssrc, seq)].Load()
	if e&1 == 0 || e>>16 != uint64(ssrc)<<16|uint64(seq) {
		return 0
	}
	return uint8(e >> 8 & MaxDSCP)
}

// Of returns the DSCP of a datagram: an RTP packet's (by its clear header), 0 for anything else.
// RTP and RTCP share the version bits; RTCP's packet types 192-223 (RFC 5761) fill the second
// byte where RTP has its marker bit and payload type.
func (m *Marks) Of(b []byte) uint8 {
	if m == nil || len(b) < 12 || b[0]>>6 != 2 || (b[1] >= 192 && b[1] <= 223) {
		return 0
	}
	return m.Lookup(binary.BigEndian.Uint32(b[8:12]), binary.BigEndian.Uint16(b[2:4]))
}
