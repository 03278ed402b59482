package media

import (
	"bytes"
	"testing"

	"github.com/pion/rtp"
)

// marshalWithExtensions builds a packet with pion/rtp, so the tests check BlankExtension against an
// independent RFC 8285 implementation.
func marshalWithExtensions(t testing.TB, profile uint16, exts map[uint8][]byte) []byte {
	t.Helper()
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: 7, SSRC: 9}, Payload: []byte("payload")}
	for id := uint8(1); id < 32; id++ { // in id order, so the layout is deterministic
		if v, ok := exts[id]; ok {
			if err := pkt.SetExtensionWithProfile(id, v, profile); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw, err := pkt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestBlankExtensionRemovesOnlyThatElement(t *testing.T) {
	for name, profile := range map[string]uint16{"one-byte": rtp.ExtensionProfileOneByte, "two-byte": rtp.ExtensionProfileTwoByte} {
		raw := marshalWithExtensions(t, profile, map[uint8][]byte{3: []byte("h"), 5: {9, 9}, 10: []byte("mid0")})
		size := len(raw)
		h, ok := ParseRTP(raw)
		if !ok {
			t.Fatalf("%s: packet rejected", name)
		}
		if !h.BlankExtension(raw, 5) {
			t.Fatalf("%s: id 5 not found", name)
		}
		if h.BlankExtension(raw, 5) || h.BlankExtension(raw, 4) || h.BlankExtension(raw, 0) {
			t.Errorf("%s: blanked an element that is not there", name)
		}
		var back rtp.Packet
		if err := back.Unmarshal(raw); err != nil {
			t.Fatalf("%s: blanked packet does not parse: %v", name, err)
		}
		if len(raw) != size || back.GetExtension(5) != nil {
			t.Errorf("%s: ext 5 = %v, size %d → %d", name, back.GetExtension(5), size, len(raw))
		}
		if string(back.GetExtension(3)) != "h" || string(back.GetExtension(10)) != "mid0" || string(back.Payload) != "payload" {
			t.Errorf("%s: neighbours damaged: 3=%q 10=%q payload %q", name, back.GetExtension(3), back.GetExtension(10), back.Payload)
		}
	}
}

func TestBlankExtensionWithoutExtensions(t *testing.T) {
	raw := []byte{0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x35, 0x61}
	orig := bytes.Clone(raw)
	h, _ := ParseRTP(raw)
	if h.BlankExtension(raw, 3) || !bytes.Equal(raw, orig) {
		t.Fatalf("packet without extensions changed: % x", raw)
	}
}

func TestBlankExtensionAllocatesNothing(t *testing.T) {
	raw := marshalWithExtensions(t, rtp.ExtensionProfileOneByte, map[uint8][]byte{3: []byte("h"), 4: []byte("l")})
	h, _ := ParseRTP(raw)
	if n := testing.AllocsPerRun(100, func() { h.BlankExtension(raw, 3); h.BlankExtension(raw, 4) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

// FuzzBlankExtension: blanking never panics, never changes the packet's layout, and leaves no element
// with that id behind.
func FuzzBlankExtension(f *testing.F) {
	f.Add(marshalWithExtensions(f, rtp.ExtensionProfileOneByte, map[uint8][]byte{1: []byte("m"), 3: []byte("hi")}), uint8(3))
	f.Add(marshalWithExtensions(f, rtp.ExtensionProfileTwoByte, map[uint8][]byte{2: {}, 20: []byte("x")}), uint8(20))
	f.Add([]byte{0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE, 0, 1, 0x30, 0x61, 0xF0, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, id uint8) {
		h, ok := ParseRTP(b)
		if !ok {
			return
		}
		payload := bytes.Clone(h.Payload(b))
		h.BlankExtension(b, id)
		h2, ok := ParseRTP(b)
		if !ok || h2 != h {
			t.Fatalf("layout changed: %+v → %+v (ok=%v)", h, h2, ok)
		}
		if !bytes.Equal(h2.Payload(b), payload) {
			t.Fatal("payload changed")
		}
		if id != 0 && h2.Extension(b, id) != nil {
			t.Fatalf("element %d still there", id)
		}
	})
}
