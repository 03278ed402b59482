package media

// BlankExtension overwrites every header extension element with the given id (its id, length and
// value) with padding bytes, in place: receivers skip padding, and the packet keeps its layout, so
// h stays valid. It reports whether an element was blanked; id 0 is never present. The echo test
// uses it so that a browser does not get its own rid back and take the echo for a simulcast stream.
func (h *Header) BlankExtension(b []byte, id uint8) bool {
	if id == 0 {
		return false
	}
	elementHeader := 1 // one-byte form: id and length share a byte
	if h.ExtProfile&0xFFF0 == 0x1000 {
		elementHeader = 2
	}
	blanked := false
	h.Extensions(b, func(eid uint8, value []byte) bool {
		if eid == id {
			// value is a subslice of b, so its offset in b is the difference of their capacities.
			start := cap(b) - cap(value) - elementHeader
			clear(b[start : start+elementHeader+len(value)])
			blanked = true
		}
		return true
	})
	return blanked
}
