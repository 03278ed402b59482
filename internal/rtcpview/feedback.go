package rtcpview

import (
	"math"
	"math/bits"
)

// feedbackHeaderSize is the common part of every RTCP feedback message (RFC 4585 §6.1): the SSRC
// of the packet sender and of the media source.
const feedbackHeaderSize = 8

// feedback checks type and format and splits the body into the two SSRCs and the FCI.
func feedback(p Packet, typ, format uint8) (sender, media uint32, fci []byte, err error) {
	if p.Type != typ || p.Count != format {
		return 0, 0, nil, ErrType
	}
	if len(p.Body) < feedbackHeaderSize {
		return 0, 0, nil, ErrShort
	}
	return be32(p.Body[0:4]), be32(p.Body[4:8]), p.Body[feedbackHeaderSize:], nil
}

// NACK is a view of a generic NACK (RFC 4585 §6.2.1): pairs of a packet id (PID) and a bitmask
// of the 16 following packets (BLP).
type NACK struct {
	SenderSSRC uint32
	MediaSSRC  uint32
	fci        []byte // a whole number of 4-byte pairs, at least one
}

// ParseNACK reads a generic NACK. The FCI must hold at least one PID/BLP pair (RFC 4585 §6.2.1:
// "MUST contain at least one").
func ParseNACK(p Packet) (NACK, error) {
	sender, media, fci, err := feedback(p, TypeRTPFB, FormatNACK)
	if err != nil {
		return NACK{}, err
	}
	fci = fci[:len(fci)&^3] // padding that is not a multiple of 4 leaves a partial word: ignore it
	if len(fci) == 0 {
		return NACK{}, ErrLength
	}
	return NACK{SenderSSRC: sender, MediaSSRC: media, fci: fci}, nil
}

// Count is the number of sequence numbers the NACK asks for (each pair's PID plus its BLP bits),
// without walking them.
func (n NACK) Count() int {
	total := 0
	for k := range n.Pairs() {
		_, blp := n.Pair(k)
		total += 1 + bits.OnesCount16(blp)
	}
	return total
}

// Pairs is the number of PID/BLP pairs.
func (n NACK) Pairs() int { return len(n.fci) / 4 }

// Pair returns pair i (zeros when i is out of range).
func (n NACK) Pair(i int) (pid, blp uint16) {
	if i < 0 || i >= n.Pairs() {
		return 0, 0
	}
	return be16(n.fci[4*i:]), be16(n.fci[4*i+2:])
}

// Lost returns an iterator over the NACKed sequence numbers, pair by pair, each PID before the
// packets its BLP marks, in increasing order (wrapping at 65535).
func (n NACK) Lost() NACKIterator { return NACKIterator{fci: n.fci} }

// AppendLost appends every NACKed sequence number to dst.
func (n NACK) AppendLost(dst []uint16) []uint16 {
	it := n.Lost()
	for seq, ok := it.Next(); ok; seq, ok = it.Next() {
		dst = append(dst, seq)
	}
	return dst
}

// NACKIterator yields the sequence numbers a NACK asks for.
type NACKIterator struct {
	fci []byte
	pid uint16
	blp uint16
	bit uint16 // next BLP bit to look at; 16 when the current pair is done
	in  bool   // a pair is loaded
}

// Next returns the next NACKed sequence number.
func (it *NACKIterator) Next() (uint16, bool) {
	if it.in {
		for ; it.bit < 16; it.bit++ {
			if it.blp&(1<<it.bit) != 0 {
				seq := it.pid + it.bit + 1
				it.bit++
				return seq, true
			}
		}
		it.in = false
	}
	if len(it.fci) < 4 {
		return 0, false
	}
	it.pid, it.blp, it.bit, it.in = be16(it.fci[0:2]), be16(it.fci[2:4]), 0, true
	it.fci = it.fci[4:]
	return it.pid, true
}

// PLI is a view of a picture loss indication (RFC 4585 §6.3.1).
type PLI struct {
	SenderSSRC uint32
	MediaSSRC  uint32
}

// ParsePLI reads a PLI. A PLI has no FCI; bytes there are ignored.
func ParsePLI(p Packet) (PLI, error) {
	sender, media, _, err := feedback(p, TypePSFB, FormatPLI)
	if err != nil {
		return PLI{}, err
	}
	return PLI{SenderSSRC: sender, MediaSSRC: media}, nil
}

// FIR is a view of a full intra request (RFC 5104 §4.3.1). The media sources are named in the FCI
// entries; the header's media SSRC is unused (0) by the RFC's rules.
type FIR struct {
	SenderSSRC uint32
	MediaSSRC  uint32
	fci        []byte // whole 8-byte entries, at least one
}

// FIREntry is one FIR request: the source to refresh and the command sequence number.
type FIREntry struct {
	SSRC uint32
	Seq  uint8
}

const firEntrySize = 8

// ParseFIR reads a FIR. The FCI must be one or more whole 8-byte entries.
func ParseFIR(p Packet) (FIR, error) {
	sender, media, fci, err := feedback(p, TypePSFB, FormatFIR)
	if err != nil {
		return FIR{}, err
	}
	if len(fci) == 0 || len(fci)%firEntrySize != 0 {
		return FIR{}, ErrLength
	}
	return FIR{SenderSSRC: sender, MediaSSRC: media, fci: fci}, nil
}

// Len is the number of FIR entries.
func (f FIR) Len() int { return len(f.fci) / firEntrySize }

// Entry returns entry i (the zero entry when i is out of range).
func (f FIR) Entry(i int) FIREntry {
	if i < 0 || i >= f.Len() {
		return FIREntry{}
	}
	e := f.fci[i*firEntrySize:]
	return FIREntry{SSRC: be32(e[0:4]), Seq: e[4]}
}

// REMB is a view of a receiver estimated maximum bitrate message
// (draft-alvestrand-rmcat-remb-03 §2.2).
type REMB struct {
	SenderSSRC uint32
	MediaSSRC  uint32 // 0 by the draft; not enforced
	Exponent   uint8  // 6 bits
	Mantissa   uint32 // 18 bits
	ssrcs      []byte
}

const rembFixedSize = 8 // "REMB", number of SSRCs, exponent and mantissa

// ParseREMB reads a REMB. The FCI must be exactly the identifier, the bitrate and as many SSRCs as
// it announces, as libwebrtc requires.
func ParseREMB(p Packet) (REMB, error) {
	sender, media, fci, err := feedback(p, TypePSFB, FormatAFB)
	if err != nil {
		return REMB{}, err
	}
	if !hasREMBIdentifier(p.Body) {
		return REMB{}, ErrNotREMB
	}
	if len(fci) < rembFixedSize {
		return REMB{}, ErrShort
	}
	num := int(fci[4])
	if len(fci) != rembFixedSize+4*num {
		return REMB{}, ErrLength
	}
	return REMB{
		SenderSSRC: sender,
		MediaSSRC:  media,
		Exponent:   fci[5] >> 2,
		Mantissa:   uint32(fci[5]&3)<<16 | uint32(fci[6])<<8 | uint32(fci[7]),
		ssrcs:      fci[rembFixedSize:],
	}, nil
}

func hasREMBIdentifier(body []byte) bool {
	return len(body) >= feedbackHeaderSize+4 && string(body[8:12]) == "REMB"
}

// Bitrate is mantissa × 2^exponent in bits per second, saturated at math.MaxUint64 (an 18-bit
// mantissa with a 6-bit exponent can say up to 2^81).
func (r REMB) Bitrate() uint64 {
	m := uint64(r.Mantissa)
	if m == 0 {
		return 0
	}
	if r.Exponent >= 64 || m > math.MaxUint64>>r.Exponent {
		return math.MaxUint64
	}
	return m << r.Exponent
}

// Len is the number of SSRCs the estimate applies to.
func (r REMB) Len() int { return len(r.ssrcs) / 4 }

// SSRC returns SSRC i (0 when i is out of range).
func (r REMB) SSRC(i int) uint32 {
	if i < 0 || i >= r.Len() {
		return 0
	}
	return be32(r.ssrcs[4*i:])
}
