package rtcpview

import "time"

// Units of the transport-wide CC feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
const (
	TWCCReferenceUnit = 64 * time.Millisecond  // unit of the 24-bit reference time
	TWCCDeltaUnit     = 250 * time.Microsecond // unit of the receive deltas
)

// twccFixedSize is the FCI before the first status chunk: base sequence number, status count,
// reference time and feedback packet count.
const twccFixedSize = 8

// Packet status symbols (§3.1.1). A one-bit status vector says only notReceived or smallDelta.
const (
	symbolNotReceived = 0
	symbolSmallDelta  = 1
	symbolLargeDelta  = 2
	symbolReserved    = 3
)

// TWCC is a view of a transport-wide congestion control feedback message.
type TWCC struct {
	SenderSSRC  uint32
	MediaSSRC   uint32
	BaseSeq     uint16 // transport-wide sequence number of the first packet reported
	StatusCount uint16 // number of packets reported, from BaseSeq on
	// ReferenceTime is the 24-bit reference time in units of TWCCReferenceUnit, in the receiver's
	// arbitrary time base, read as signed (draft-01 §3.1). libwebrtc writes it modulo 2^24 and
	// pion reads it unsigned: uint32(ReferenceTime)&0xffffff is that reading. Either way it wraps,
	// so a consumer that joins feedbacks on one clock must unwrap it.
	ReferenceTime int32
	FbPktCount    uint8  // feedback packet count, for detecting lost feedback
	chunks        []byte // the status chunks covering StatusCount packets
	deltas        []byte // the receive deltas those chunks announce, exactly
}

// Status is one packet's fate in a TWCC feedback.
type Status struct {
	Seq      uint16
	Received bool
	// Delta is the receive time minus the previous received packet's (or, for the first, the
	// reference time): a multiple of 250 µs, small deltas in [0, 63.75 ms], large ones in
	// [-8192 ms, 8191.75 ms]. 0 when not received.
	Delta time.Duration
}

// ParseTWCC reads a TWCC feedback and checks all of it: every status chunk the status count needs
// is present, no status within the count uses the reserved symbol, and every receive delta is
// present. Symbols of the last status vector beyond the count are ignored and need no deltas.
// Bytes after the deltas (zero padding without the padding bit) are ignored.
func ParseTWCC(p Packet) (TWCC, error) {
	sender, media, fci, err := feedback(p, TypeRTPFB, FormatTWCC)
	if err != nil {
		return TWCC{}, err
	}
	if len(fci) < twccFixedSize {
		return TWCC{}, ErrShort
	}
	t := TWCC{
		SenderSSRC:    sender,
		MediaSSRC:     media,
		BaseSeq:       be16(fci[0:2]),
		StatusCount:   be16(fci[2:4]),
		ReferenceTime: signed24(fci[4:7]),
		FbPktCount:    fci[7],
	}
	rest := fci[twccFixedSize:]
	chunkBytes, deltaBytes, err := measureChunks(rest, int(t.StatusCount))
	if err != nil {
		return TWCC{}, err
	}
	if chunkBytes+deltaBytes > len(rest) {
		return TWCC{}, ErrMissingDeltas
	}
	t.chunks = rest[:chunkBytes]
	t.deltas = rest[chunkBytes : chunkBytes+deltaBytes]
	return t, nil
}

// Reference returns the reference time as a duration in the receiver's time base.
func (t *TWCC) Reference() time.Duration {
	return time.Duration(t.ReferenceTime) * TWCCReferenceUnit
}

// measureChunks walks the status chunks for count packets and returns how many bytes of chunks
// they take and how many bytes of receive deltas they announce.
func measureChunks(b []byte, count int) (chunkBytes, deltaBytes int, err error) {
	for left := count; left > 0; {
		if chunkBytes+2 > len(b) {
			return 0, 0, ErrShort
		}
		c := be16(b[chunkBytes:])
		chunkBytes += 2
		n := min(chunkLen(c), left)
		d, ok := chunkDeltaBytes(c, n)
		if !ok {
			return 0, 0, ErrReservedSymbol
		}
		deltaBytes += d
		left -= n
	}
	return chunkBytes, deltaBytes, nil
}

// chunkLen is the number of statuses chunk c holds: its run length, 14 one-bit or 7 two-bit
// symbols (§3.1.3, §3.1.4).
func chunkLen(c uint16) int {
	switch {
	case c&0x8000 == 0:
		return int(c & 0x1fff)
	case c&0x4000 == 0:
		return 14
	default:
		return 7
	}
}

// chunkSymbol returns the symbol of status i of chunk c (i < chunkLen(c)).
func chunkSymbol(c uint16, i int) uint16 {
	switch {
	case c&0x8000 == 0:
		return c >> 13 & 3
	case c&0x4000 == 0:
		return c >> (13 - i) & 1
	default:
		return c >> (12 - 2*i) & 3
	}
}

// chunkDeltaBytes is the size of the receive deltas for the first n statuses of chunk c; false
// when one of them is the reserved symbol.
func chunkDeltaBytes(c uint16, n int) (int, bool) {
	if c&0x8000 == 0 { // run length: one symbol n times
		switch c >> 13 & 3 {
		case symbolReserved:
			return 0, n == 0
		case symbolNotReceived:
			return 0, true
		default:
			return n * int(c>>13&3), true
		}
	}
	total := 0
	for i := 0; i < n; i++ {
		s := chunkSymbol(c, i)
		if s == symbolReserved {
			return 0, false
		}
		total += int(s) // a symbol's value is its delta size in bytes
	}
	return total, true
}

// Statuses returns an iterator over every packet status in sequence order.
func (t *TWCC) Statuses() StatusIterator {
	return StatusIterator{chunks: t.chunks, deltas: t.deltas, seq: t.BaseSeq, left: int(t.StatusCount)}
}

// AppendStatuses appends every packet status to dst (reusing its capacity) and returns it.
func (t *TWCC) AppendStatuses(dst []Status) []Status {
	it := t.Statuses()
	for s, ok := it.Next(); ok; s, ok = it.Next() {
		dst = append(dst, s)
	}
	return dst
}

// StatusIterator yields the packet statuses of a TWCC feedback; a value type with no pointers
// into the heap beyond the packet's bytes, so it lives on the caller's stack.
type StatusIterator struct {
	chunks, deltas []byte
	seq            uint16
	left           int    // statuses still to yield
	chunk          uint16 // current chunk
	inChunk        int    // statuses of the current chunk still to yield
	pos            int    // index of the next status in the current chunk
}

// Next returns the next packet status. Because ParseTWCC checked chunks and deltas, it yields
// exactly StatusCount statuses; the bounds checks here only keep a zero-value iterator safe.
func (it *StatusIterator) Next() (Status, bool) {
	if it.left <= 0 {
		return Status{}, false
	}
	for it.inChunk == 0 {
		if len(it.chunks) < 2 {
			it.left = 0
			return Status{}, false
		}
		it.chunk = be16(it.chunks)
		it.chunks = it.chunks[2:]
		it.inChunk = min(chunkLen(it.chunk), it.left)
		it.pos = 0
	}
	sym := chunkSymbol(it.chunk, it.pos)
	it.pos++
	it.inChunk--
	it.left--
	s := Status{Seq: it.seq}
	it.seq++
	switch sym {
	case symbolSmallDelta:
		if len(it.deltas) < 1 {
			it.left = 0
			return Status{}, false
		}
		s.Received, s.Delta = true, time.Duration(it.deltas[0])*TWCCDeltaUnit
		it.deltas = it.deltas[1:]
	case symbolLargeDelta:
		if len(it.deltas) < 2 {
			it.left = 0
			return Status{}, false
		}
		s.Received, s.Delta = true, time.Duration(int16(be16(it.deltas)))*TWCCDeltaUnit
		it.deltas = it.deltas[2:]
	}
	return s, true
}
