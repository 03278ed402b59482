package media

import (
	"encoding/binary"
	"slices"
	"testing"
)

// rtxPacket builds an RTX packet repairing seq, with optional extension and padding.
func rtxPacket(seq uint16, payload []byte, ext bool, pad int) []byte {
	b := []byte{0x80, 97, 0, 9, 0, 0, 0x10, 0, 0, 0, 0, 201}
	if ext {
		b[0] |= 0x10
		b = append(b, 0xBE, 0xDE, 0, 1, 0x10, 0xAA, 0, 0)
	}
	b = append(b, byte(seq>>8), byte(seq))
	b = append(b, payload...)
	if pad > 0 {
		b[0] |= 0x20
		b = append(b, make([]byte, pad-1)...)
		b = append(b, byte(pad))
	}
	return b
}

func TestUnwrapRTX(t *testing.T) {
	for _, c := range []struct {
		name     string
		pkt      []byte
		ok       bool
		payload  []byte
		extended bool
	}{
		{"plain", rtxPacket(0xBEEF, []byte{1, 2, 3}, false, 0), true, []byte{1, 2, 3}, false},
		{"extension and padding", rtxPacket(7, []byte{9, 8}, true, 4), true, []byte{9, 8}, true},
		{"probe: padding, no OSN", append([]byte{0xA0, 97, 0, 9, 0, 0, 0, 0, 0, 0, 0, 201}, make([]byte, 255)...), false, nil, false},
		{"OSN only", rtxPacket(7, nil, false, 0), false, nil, false},
		{"not RTP", []byte{1, 2, 3}, false, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.pkt) > 0 && c.pkt[0]&0x20 != 0 && c.payload == nil {
				c.pkt[len(c.pkt)-1] = byte(len(c.pkt) - 12)
			}
			osn := uint16(0)
			if h, ok := ParseRTP(c.pkt); ok && h.PayloadEnd-h.PayloadStart >= 2 {
				osn = binary.BigEndian.Uint16(c.pkt[h.PayloadStart:])
			}
			out, ok := UnwrapRTX(c.pkt, 0x11223344, 96)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			h, valid := ParseRTP(out)
			if !valid {
				t.Fatalf("unwrapped packet does not parse: %x", out)
			}
			if h.Seq != osn || h.SSRC != 0x11223344 || h.PayloadType != 96 || h.Timestamp != 0x1000 {
				t.Fatalf("header %+v", h)
			}
			if got := out[h.PayloadStart:h.PayloadEnd]; !slices.Equal(got, c.payload) {
				t.Fatalf("payload %x, want %x", got, c.payload)
			}
			if (h.ExtProfile != 0) != c.extended {
				t.Fatalf("extension lost or invented: %+v", h)
			}
		})
	}
}

// FuzzUnwrapRTX: any input either is refused or becomes a valid RTP packet two bytes shorter.
func FuzzUnwrapRTX(f *testing.F) {
	f.Add(rtxPacket(1, []byte{1, 2, 3}, true, 3))
	f.Add(rtxPacket(1, nil, false, 0))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		in := slices.Clone(b)
		out, ok := UnwrapRTX(b, 5, 96)
		if !ok {
			return
		}
		if len(out) != len(in)-2 {
			t.Fatalf("length %d from %d", len(out), len(in))
		}
		if _, valid := ParseRTP(out); !valid {
			t.Fatalf("unwrapped %x from %x does not parse", out, in)
		}
	})
}

// BenchmarkUnwrapRTX: turning a retransmission back into its packet is on the media path of the
// upper layers of SSRC simulcast; it allocates nothing.
func BenchmarkUnwrapRTX(b *testing.B) {
	pkt := rtxPacket(1234, make([]byte, 1100), true, 0)
	buf := make([]byte, len(pkt))
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		copy(buf, pkt)
		if _, ok := UnwrapRTX(buf, 5, 96); !ok {
			b.Fatal("refused")
		}
	}
}
