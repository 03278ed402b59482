package lowprio

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the wire format's version.
const Version = 1

// Message types (the low nibble of the first byte).
const (
	TypeData  = 1
	TypeAck   = 2
	TypeFin   = 3
	TypeReset = 4
)

// Header and field sizes.
const (
	DataHeader    = 21 // vt, id, seq, ts, offset
	ackHeader     = 26 // vt, id, cumSeq, echoTS, recvTS, limit, n
	finSize       = 21
	resetHeader   = 8
	MaxSACKRanges = 16
	maxReason     = 255
	// MaxOffset bounds stream offsets so that offset + length never overflows.
	MaxOffset = 1 << 62
)

// Decode errors.
var (
	ErrShort   = errors.New("lowprio: message too short")
	ErrVersion = errors.New("lowprio: unknown version")
	ErrType    = errors.New("lowprio: unknown message type")
	ErrLength  = errors.New("lowprio: message length does not match its fields")
	ErrOffset  = errors.New("lowprio: offset or length out of range")
	ErrRanges  = errors.New("lowprio: SACK ranges empty, unsorted or overlapping")
	ErrBuffer  = errors.New("lowprio: buffer too small")
)

// Range is a run [Start, End) of sequence numbers.
type Range struct{ Start, End uint32 }

// Message is one decoded message. Payload and Reason alias the decoded buffer; SACK holds the
// ranges in Ranges[:NRanges] so decoding allocates nothing.
type Message struct {
	Type     uint8
	Transfer uint32
	Seq      uint32 // DATA, FIN
	SendTS   uint32 // DATA, FIN
	Offset   uint64 // DATA offset, FIN final length
	Payload  []byte // DATA

	CumSeq  uint32 // ACK
	EchoTS  uint32
	RecvTS  uint32
	Limit   uint64
	NRanges int
	Ranges  [MaxSACKRanges]Range

	Code   uint16 // RESET
	Reason []byte
}

// SACK returns the ACK's ranges.
func (m *Message) SACK() []Range { return m.Ranges[:m.NRanges] }

func vt(typ uint8) byte { return Version<<4 | typ }

// EncodeData encodes a DATA message into buf[:0] and returns it; buf must have room.
func EncodeData(buf []byte, id, seq, ts uint32, offset uint64, payload []byte) ([]byte, error) {
	n := DataHeader + len(payload)
	if cap(buf) < n {
		return nil, ErrBuffer
	}
	b := buf[:n]
	b[0] = vt(TypeData)
	binary.BigEndian.PutUint32(b[1:], id)
	binary.BigEndian.PutUint32(b[5:], seq)
	binary.BigEndian.PutUint32(b[9:], ts)
	binary.BigEndian.PutUint64(b[13:], offset)
	copy(b[DataHeader:], payload)
	return b, nil
}

// EncodeAck encodes an ACK with m's CumSeq, EchoTS, RecvTS, Limit and SACK ranges.
func EncodeAck(buf []byte, m *Message) ([]byte, error) {
	n := ackHeader + 8*m.NRanges
	if cap(buf) < n || m.NRanges > MaxSACKRanges {
		return nil, ErrBuffer
	}
	b := buf[:n]
	b[0] = vt(TypeAck)
	binary.BigEndian.PutUint32(b[1:], m.Transfer)
	binary.BigEndian.PutUint32(b[5:], m.CumSeq)
	binary.BigEndian.PutUint32(b[9:], m.EchoTS)
	binary.BigEndian.PutUint32(b[13:], m.RecvTS)
	binary.BigEndian.PutUint64(b[17:], m.Limit)
	b[25] = byte(m.NRanges)
	for i, r := range m.SACK() {
		binary.BigEndian.PutUint32(b[ackHeader+8*i:], r.Start)
		binary.BigEndian.PutUint32(b[ackHeader+8*i+4:], r.End)
	}
	return b, nil
}

// EncodeFin encodes a FIN: the stream ends at finalLen bytes.
func EncodeFin(buf []byte, id, seq, ts uint32, finalLen uint64) ([]byte, error) {
	if cap(buf) < finSize {
		return nil, ErrBuffer
	}
	b := buf[:finSize]
	b[0] = vt(TypeFin)
	binary.BigEndian.PutUint32(b[1:], id)
	binary.BigEndian.PutUint32(b[5:], seq)
	binary.BigEndian.PutUint32(b[9:], ts)
	binary.BigEndian.PutUint64(b[13:], finalLen)
	return b, nil
}

// EncodeReset encodes a RESET; the reason is truncated to 255 bytes.
func EncodeReset(buf []byte, id uint32, code uint16, reason string) ([]byte, error) {
	reason = reason[:min(len(reason), maxReason)]
	n := resetHeader + len(reason)
	if cap(buf) < n {
		return nil, ErrBuffer
	}
	b := buf[:n]
	b[0] = vt(TypeReset)
	binary.BigEndian.PutUint32(b[1:], id)
	binary.BigEndian.PutUint16(b[5:], code)
	b[7] = byte(len(reason))
	copy(b[resetHeader:], reason)
	return b, nil
}

// Decode parses b into m. It checks everything that can be checked without connection state:
// version, type, lengths, offsets and the SACK ranges' order.
func Decode(b []byte, m *Message) error {
	if len(b) < 5 {
		return ErrShort
	}
	if b[0]>>4 != Version {
		return fmt.Errorf("%w %d", ErrVersion, b[0]>>4)
	}
	m.Type = b[0] & 0x0f
	m.Transfer = binary.BigEndian.Uint32(b[1:])
	switch m.Type {
	case TypeData, TypeFin:
		return decodeData(b, m)
	case TypeAck:
		return decodeAck(b, m)
	case TypeReset:
		return decodeReset(b, m)
	}
	return fmt.Errorf("%w %d", ErrType, m.Type)
}

func decodeData(b []byte, m *Message) error {
	if len(b) < DataHeader {
		return ErrShort
	}
	if m.Type == TypeFin && len(b) != finSize {
		return ErrLength
	}
	m.Seq = binary.BigEndian.Uint32(b[5:])
	m.SendTS = binary.BigEndian.Uint32(b[9:])
	m.Offset = binary.BigEndian.Uint64(b[13:])
	m.Payload = b[DataHeader:]
	if m.Offset > MaxOffset || m.Offset+uint64(len(m.Payload)) > MaxOffset {
		return ErrOffset
	}
	return nil
}

func decodeAck(b []byte, m *Message) error {
	if len(b) < ackHeader {
		return ErrShort
	}
	m.CumSeq = binary.BigEndian.Uint32(b[5:])
	m.EchoTS = binary.BigEndian.Uint32(b[9:])
	m.RecvTS = binary.BigEndian.Uint32(b[13:])
	m.Limit = binary.BigEndian.Uint64(b[17:])
	n := int(b[25])
	if n > MaxSACKRanges || len(b) != ackHeader+8*n {
		return ErrLength
	}
	if m.Limit > MaxOffset {
		return ErrOffset
	}
	m.NRanges = n
	prev := m.CumSeq
	for i := range n {
		r := Range{binary.BigEndian.Uint32(b[ackHeader+8*i:]), binary.BigEndian.Uint32(b[ackHeader+8*i+4:])}
		if r.Start <= prev || r.End <= r.Start {
			return ErrRanges
		}
		m.Ranges[i], prev = r, r.End
	}
	return nil
}

func decodeReset(b []byte, m *Message) error {
	if len(b) < resetHeader {
		return ErrShort
	}
	m.Code = binary.BigEndian.Uint16(b[5:])
	if len(b) != resetHeader+int(b[7]) {
		return ErrLength
	}
	m.Reason = b[resetHeader:]
	return nil
}
