package media

import (
	"testing"
	"time"
)

// FuzzParseRTP: arbitrary bytes never panic, and whatever is accepted lies inside the buffer.
func FuzzParseRTP(f *testing.F) {
	f.Add([]byte{0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 'x'})
	f.Add([]byte{0xB1, 0xE0, 0x12, 0x34, 0, 0, 0, 9, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 0xBE, 0xDE, 0, 1, 0x10, 0xAA, 0, 0, 'a', 0, 2})
	f.Add([]byte{0x90, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x10, 0x00, 0, 1, 5, 1, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := ParseRTP(b)
		if !ok {
			return
		}
		if h.PayloadStart > h.PayloadEnd || h.PayloadEnd > len(b) || h.ExtEnd > len(b) {
			t.Fatalf("bounds outside the buffer: %+v len %d", h, len(b))
		}
		for id := uint8(0); id < 16; id++ {
			_ = h.Extension(b, id)
		}
		h.Extensions(b, func(uint8, []byte) bool { return true })
	})
}

// FuzzPayloads runs every codec parser on the same bytes; the positions they report must be inside
// the payload, and the rewriter must survive whatever they accept.
func FuzzPayloads(f *testing.F) {
	f.Add(byte(CodecVP8), []byte{0x90, 0xE0, 0x92, 0x34, 7, 0xA0, 0x00, 1, 2})
	f.Add(byte(CodecVP9), []byte{0xA8, 0x80, 0x05, 0x00, 3, 0xAA})
	f.Add(byte(CodecVP9), []byte{0x0A, 0x58, 0, 1, 0, 1, 0, 2, 0, 2, 0, 4, 0, 4, 1, 0x04, 1, 0xAB})
	f.Add(byte(CodecH264), []byte{0x78, 0, 2, 0x67, 1, 0, 2, 0x68, 1})
	f.Add(byte(CodecH264), []byte{0x7C, 0x85, 1})
	f.Add(byte(CodecAV1), []byte{0x08, 0x12})
	f.Fuzz(func(t *testing.T, codec byte, p []byte) {
		fl, ok := ParsePayload(Codec(codec%10), p)
		if !ok {
			return
		}
		picEnd := int(fl.PicIDPos)
		if fl.PicID15 {
			picEnd++
		}
		if (fl.PicIDPos != 0 && picEnd >= len(p)) || (fl.TL0Pos != 0 && int(fl.TL0Pos) >= len(p)) {
			t.Fatalf("positions outside the payload: %+v len %d", fl, len(p))
		}
		pkt := append([]byte{0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, p...)
		h, ok := ParseRTP(pkt)
		if !ok {
			t.Fatal("wrapper packet invalid")
		}
		r := NewRewriter(90000)
		if m, ok := r.Rewrite(&h, &fl, h.Payload(pkt), 0); ok {
			m.WritePayload(&fl, h.Payload(pkt))
		}
		r.Switch()
		r.Drop(&h, &fl, h.Payload(pkt), true)
		r.Rewrite(&h, &fl, h.Payload(pkt), time.Millisecond)
	})
}

// FuzzDependencyDescriptor feeds arbitrary descriptors to a parser that first learnt a valid
// structure, then to a fresh one.
func FuzzDependencyDescriptor(f *testing.F) {
	f.Add(l1t3Structure(0, 1))
	f.Add(mandatoryOnly(true, true, 3, 5))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var learnt DDParser
		if _, ok := learnt.Parse(l1t3Structure(0, 1)); !ok {
			t.Fatal("seed structure rejected")
		}
		for _, d := range []*DDParser{&learnt, {}} {
			fr, ok := d.Parse(b)
			if !ok {
				continue
			}
			if fr.SID < 0 || fr.SID > 7 || fr.TID < 0 || fr.TID > 7 {
				t.Fatalf("layer ids out of range: %+v", fr)
			}
			fl := NoLayers()
			fr.Flags(&fl)
		}
	})
}
