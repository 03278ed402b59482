package rtcpview

import (
	"encoding/binary"
	"errors"
)

// Packet types (RFC 3550 §12.1, RFC 4585 §6.1, RFC 3611).
const (
	TypeSR    uint8 = 200 // sender report
	TypeRR    uint8 = 201 // receiver report
	TypeSDES  uint8 = 202 // source description
	TypeBYE   uint8 = 203 // goodbye
	TypeAPP   uint8 = 204 // application-defined
	TypeRTPFB uint8 = 205 // transport-layer feedback
	TypePSFB  uint8 = 206 // payload-specific feedback
	TypeXR    uint8 = 207 // extended report
)

// Feedback message types (FMT, the header's count field in feedback packets).
const (
	FormatNACK uint8 = 1  // RTPFB: generic NACK (RFC 4585 §6.2.1)
	FormatTWCC uint8 = 15 // RTPFB: transport-wide CC feedback (draft-holmer-…-01 §3.1)
	FormatPLI  uint8 = 1  // PSFB: picture loss indication (RFC 4585 §6.3.1)
	FormatFIR  uint8 = 4  // PSFB: full intra request (RFC 5104 §4.3.1)
	FormatAFB  uint8 = 15 // PSFB: application layer feedback, REMB when it says "REMB"
)

// HeaderSize is the size of the common RTCP header.
const HeaderSize = 4

// Errors the iterator and the views return; compare with errors.Is.
var (
	ErrShort          = errors.New("rtcpview: packet shorter than its header or fields say")
	ErrVersion        = errors.New("rtcpview: RTCP version is not 2")
	ErrPadding        = errors.New("rtcpview: padding count is 0 or larger than the packet")
	ErrType           = errors.New("rtcpview: wrong packet type or feedback format for this view")
	ErrLength         = errors.New("rtcpview: FCI length does not fit the feedback format")
	ErrNotREMB        = errors.New("rtcpview: application layer feedback without the REMB identifier")
	ErrReservedSymbol = errors.New("rtcpview: TWCC packet status uses the reserved symbol 3")
	ErrMissingDeltas  = errors.New("rtcpview: TWCC feedback ends before its receive deltas")
)

// Packet is one sub-packet of a compound RTCP packet. Body and Raw alias the input.
type Packet struct {
	Type uint8 // packet type (PT)
	// Count is the header's 5-bit count field: reception report count (SR, RR), source count
	// (SDES, BYE), subtype (APP) or feedback message type (RTPFB, PSFB).
	Count   uint8
	Padding bool
	// Body is what follows the 4-byte header, without the padding.
	Body []byte
	// Raw is the whole sub-packet: header, body and padding.
	Raw []byte
}

// Kind names what a sub-packet is, for a switch; KindOther for anything without a view here.
type Kind uint8

const (
	KindOther Kind = iota
	KindSR
	KindRR
	KindNACK
	KindTWCC
	KindPLI
	KindFIR
	KindREMB
)

var kindNames = [...]string{"other", "SR", "RR", "NACK", "TWCC", "PLI", "FIR", "REMB"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Kind classifies p by type and feedback format (and, for application layer feedback, the REMB
// identifier). It does not validate the body: the Parse function of that kind does.
func (p Packet) Kind() Kind {
	switch p.Type {
	case TypeSR:
		return KindSR
	case TypeRR:
		return KindRR
	case TypeRTPFB:
		switch p.Count {
		case FormatNACK:
			return KindNACK
		case FormatTWCC:
			return KindTWCC
		}
	case TypePSFB:
		switch p.Count {
		case FormatPLI:
			return KindPLI
		case FormatFIR:
			return KindFIR
		case FormatAFB:
			if hasREMBIdentifier(p.Body) {
				return KindREMB
			}
		}
	}
	return KindOther
}

// Iterator walks the sub-packets of a compound RTCP packet:
//
//	it := rtcpview.Iterate(b)
//	for p, ok := it.Next(); ok; p, ok = it.Next() { ... }
//	if err := it.Err(); err != nil { ... }
type Iterator struct {
	rest []byte
	err  error
}

// Iterate returns an iterator over the sub-packets of b. An empty b is an error (ErrShort), as it
// is for pion/rtcp: a datagram that carries RTCP carries at least one packet.
func Iterate(b []byte) Iterator {
	it := Iterator{rest: b}
	if len(b) == 0 {
		it.err = ErrShort
	}
	return it
}

// Next returns the next sub-packet. It returns false at the end of the input or at the first
// sub-packet whose framing is wrong (then Err says why); it never returns a packet after that.
func (it *Iterator) Next() (Packet, bool) {
	if it.err != nil || len(it.rest) == 0 {
		return Packet{}, false
	}
	p, n, err := parsePacket(it.rest)
	if err != nil {
		it.err, it.rest = err, nil
		return Packet{}, false
	}
	it.rest = it.rest[n:]
	return p, true
}

// Err returns the framing error that stopped the iteration, or nil.
func (it *Iterator) Err() error { return it.err }

// parsePacket frames the sub-packet at the start of b: version, length in 32-bit words minus one,
// and padding whose last byte counts itself (RFC 3550 §6.4.1). Like libwebrtc, it does not insist
// on a multiple of four padding bytes, only that the count is neither 0 nor beyond the body.
func parsePacket(b []byte) (Packet, int, error) {
	if len(b) < HeaderSize {
		return Packet{}, 0, ErrShort
	}
	if b[0]>>6 != 2 {
		return Packet{}, 0, ErrVersion
	}
	n := 4 * (int(binary.BigEndian.Uint16(b[2:4])) + 1)
	if n > len(b) {
		return Packet{}, 0, ErrShort
	}
	p := Packet{
		Type:    b[1],
		Count:   b[0] & 0x1f,
		Padding: b[0]&0x20 != 0,
		Body:    b[HeaderSize:n],
		Raw:     b[:n],
	}
	if p.Padding {
		if len(p.Body) == 0 {
			return Packet{}, 0, ErrPadding
		}
		pad := int(p.Body[len(p.Body)-1])
		if pad == 0 || pad > len(p.Body) {
			return Packet{}, 0, ErrPadding
		}
		p.Body = p.Body[:len(p.Body)-pad]
	}
	return p, n, nil
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// signed24 sign-extends the 24-bit big-endian integer in b[0:3].
func signed24(b []byte) int32 {
	return int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8
}
