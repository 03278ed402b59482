package playable

import "errors"

// AV1 OBU types (AV1 specification §6.2.2).
const (
	obuSequenceHeader    = 1
	obuTemporalDelimiter = 2
	obuPadding           = 15
)

var errOBU = errors.New("playable: malformed AV1 OBU")

// obu is one OBU of a low-overhead bitstream: its type, header (with its extension) and payload.
type obu struct {
	typ     byte
	header  []byte
	payload []byte
}

// nextOBU reads the OBU at the start of b, which must carry its size, and returns the rest.
func nextOBU(b []byte) (o obu, rest []byte, err error) {
	if len(b) < 1 || b[0]&0x80 != 0 || b[0]&0x02 == 0 {
		return o, nil, errOBU // forbidden bit set, or no size field
	}
	o.typ = (b[0] >> 3) & 0x0f
	h := 1
	if b[0]&0x04 != 0 {
		h = 2
	}
	if len(b) < h {
		return o, nil, errOBU
	}
	size, n := leb128(b[h:])
	if n == 0 || uint64(len(b)-h-n) < size {
		return o, nil, errOBU
	}
	end := h + n + int(size)
	return obu{typ: o.typ, header: b[:h], payload: b[h+n : end]}, b[end:], nil
}

// appendOBUs appends to out the OBUs of b that keep says to keep.
func appendOBUs(out, b []byte, keep func(typ byte) bool) ([]byte, error) {
	for len(b) > 0 {
		o, rest, err := nextOBU(b)
		if err != nil {
			return out, err
		}
		if keep(o.typ) {
			out = append(out, b[:len(b)-len(rest)]...)
		}
		b = rest
	}
	return out, nil
}

// leb128 reads an unsigned LEB128 number (at most 8 bytes); n is 0 when malformed.
func leb128(b []byte) (v uint64, n int) {
	for i := 0; i < 8 && i < len(b); i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}
