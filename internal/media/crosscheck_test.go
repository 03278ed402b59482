package media

import (
	"testing"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
)

// TestParseRTPAgreesWithPion cross-checks the header view against a packet pion/rtp marshalled, with
// CSRCs, extensions and a sequence number at the wrap.
func TestParseRTPAgreesWithPion(t *testing.T) {
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, Marker: true, PayloadType: 96, SequenceNumber: 65535, Timestamp: 123456, SSRC: 0xdeadbeef, CSRC: []uint32{1, 2}}, Payload: []byte{1, 2, 3, 4}}
	_ = pkt.SetExtension(3, []byte("h"))
	_ = pkt.SetExtension(5, []byte{9, 9})
	raw, err := pkt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h, ok := ParseRTP(raw)
	if !ok || h.Seq != 65535 || h.Timestamp != 123456 || h.SSRC != 0xdeadbeef || !h.Marker || h.PayloadType != 96 {
		t.Fatalf("header %+v", h)
	}
	if string(h.Payload(raw)) != string(pkt.Payload) {
		t.Fatalf("payload at %d:%d is % x", h.PayloadStart, h.PayloadEnd, h.Payload(raw))
	}
	if string(h.Extension(raw, 3)) != "h" || string(h.Extension(raw, 5)) != "\x09\x09" {
		t.Fatalf("extensions 3=%q 5=%q", h.Extension(raw, 3), h.Extension(raw, 5))
	}
}

// TestVP8AgreesWithPion cross-checks the descriptor positions ParseVP8 reports against pion/rtp's VP8
// depacketizer.
func TestVP8AgreesWithPion(t *testing.T) {
	payloads := [][]byte{
		{0x90, 0xE0, 0x92, 0x34, 9, 0x60, 0x01, 0xAA}, // 15-bit id, TL0PICIDX, TID 1 Y
		{0x90, 0xE0, 0x80, 0x05, 0, 0x20, 0x00, 0xAA}, // keyframe, TID 0
		{0x90, 0x80, 0x05, 0x00},                      // 7-bit id only
	}
	for _, p := range payloads {
		var ref codecs.VP8Packet
		if _, err := ref.Unmarshal(p); err != nil {
			t.Fatal(err)
		}
		f, ok := ParseVP8(p)
		if !ok {
			t.Fatalf("% x rejected", p)
		}
		pic, hasPic := f.PictureID(p)
		tl0, hasTL0 := f.TL0PicIdx(p)
		if hasPic != (ref.I == 1) || pic != ref.PictureID || hasTL0 != (ref.L == 1) || (hasTL0 && tl0 != ref.TL0PICIDX) {
			t.Errorf("% x: ours pic %d/%v tl0 %d/%v, pion %+v", p, pic, hasPic, tl0, hasTL0, ref)
		}
		if (ref.T == 1 && int8(ref.TID) != f.TID) || (ref.T == 1 && (ref.Y == 1) != f.SwitchUp) {
			t.Errorf("% x: ours TID %d Y %v, pion %+v", p, f.TID, f.SwitchUp, ref)
		}
	}
}
