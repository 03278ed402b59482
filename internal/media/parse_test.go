package media

import (
	"strings"
	"testing"
)

func TestParseRTPLocatesEveryPart(t *testing.T) {
	// V=2, P=1, X=1, CC=1; marker, PT 96; seq 0x1234; ts; ssrc; one CSRC; one-byte extension block
	// with id 1 (len 1) and id 3 (len 2) then padding; payload "abc"; 2 padding bytes.
	pkt := []byte{
		0xB1, 0xE0, 0x12, 0x34, 0, 0, 0, 9, 0xde, 0xad, 0xbe, 0xef,
		1, 2, 3, 4,
		0xBE, 0xDE, 0, 2,
		0x10, 0xAA, 0x31, 0xBB, 0xCC, 0, 0, 0,
		'a', 'b', 'c', 0, 2,
	}
	h, ok := ParseRTP(pkt)
	if !ok {
		t.Fatal("valid packet rejected")
	}
	if !h.Marker || h.PayloadType != 96 || h.Seq != 0x1234 || h.Timestamp != 9 || h.SSRC != 0xdeadbeef {
		t.Fatalf("header fields: %+v", h)
	}
	if got := string(h.Payload(pkt)); got != "abc" {
		t.Fatalf("payload %q", got)
	}
	if v := h.Extension(pkt, 1); len(v) != 1 || v[0] != 0xAA {
		t.Fatalf("extension 1: %x", v)
	}
	if v := h.Extension(pkt, 3); len(v) != 2 || v[0] != 0xBB || v[1] != 0xCC {
		t.Fatalf("extension 3: %x", v)
	}
	if v := h.Extension(pkt, 2); v != nil {
		t.Fatalf("absent extension found: %x", v)
	}
	SetSeq(pkt, 7)
	SetTimestamp(pkt, 8)
	SetSSRC(pkt, 9)
	SetPayloadType(pkt, 100)
	SetMarker(pkt, false)
	h2, _ := ParseRTP(pkt)
	if h2.Seq != 7 || h2.Timestamp != 8 || h2.SSRC != 9 || h2.PayloadType != 100 || h2.Marker {
		t.Fatalf("rewritten header: %+v", h2)
	}
}

func TestParseRTPRejectsBrokenPackets(t *testing.T) {
	for name, pkt := range map[string][]byte{
		"short":            {0x80, 0, 0, 1},
		"version 1":        {0x40, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		"csrc overflow":    {0x8F, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		"extension cut":    {0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xBE, 0xDE},
		"extension length": {0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xBE, 0xDE, 0, 9},
		"zero padding":     {0xA0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
		"padding too long": {0xA0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9},
	} {
		if _, ok := ParseRTP(pkt); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTwoByteExtensions(t *testing.T) {
	pkt := []byte{0x90, 0x60, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x10, 0x00, 0, 2, 5, 3, 1, 2, 3, 0, 0, 0, 'x'}
	h, ok := ParseRTP(pkt)
	if !ok {
		t.Fatal("rejected")
	}
	if v := h.Extension(pkt, 5); string(v) != "\x01\x02\x03" {
		t.Fatalf("two-byte element: %x", v)
	}
}

func TestVP8Descriptor(t *testing.T) {
	// X=1 S=1 PID=0; I L T; 15-bit picture id 0x1234; TL0PICIDX 7; TID 2, Y=1; VP8 header keyframe.
	key := []byte{0x90, 0xE0, 0x92, 0x34, 7, 0xA0, 0x00, 1, 2}
	f, ok := ParseVP8(key)
	if !ok || !f.Keyframe || !f.Start || f.TID != 2 || !f.SwitchUp {
		t.Fatalf("keyframe flags: %+v ok=%v", f, ok)
	}
	if id, _ := f.PictureID(key); id != 0x1234 || !f.PicID15 {
		t.Fatalf("picture id %x", id)
	}
	if v, _ := f.TL0PicIdx(key); v != 7 {
		t.Fatalf("tl0picidx %d", v)
	}
	f.SetPictureID(key, 0x7fff)
	f.SetTL0PicIdx(key, 9)
	if id, _ := f.PictureID(key); id != 0x7fff {
		t.Fatalf("set picture id %x", id)
	}
	// Interframe continuation: S=0, N=1, 7-bit picture id, TID 0, no Y.
	cont := []byte{0xA0, 0xA0, 0x05, 0x00, 0xff}
	f, ok = ParseVP8(cont)
	if !ok || f.Keyframe || f.Start || !f.Discardable || f.TID != 0 || f.SwitchUp || f.PicID15 {
		t.Fatalf("continuation flags: %+v", f)
	}
	// Interframe start: P bit set in the VP8 header.
	if f, _ := ParseVP8([]byte{0x10, 0x01}); f.Keyframe || !f.Start {
		t.Fatalf("interframe: %+v", f)
	}
	for _, bad := range [][]byte{{}, {0x80}, {0x80, 0x80}, {0x80, 0x80, 0x80}, {0x80, 0x40}, {0x80, 0x20}, {0x10}} {
		if _, ok := ParseVP8(bad); ok {
			t.Errorf("accepted %x", bad)
		}
	}
}

func TestVP9Descriptor(t *testing.T) {
	// Non-flexible: I=1 P=0 L=1 F=0 B=1 E=0 V=0; pid 15-bit; TID 0 U=0 SID 0 D=0; TL0PICIDX 3.
	key := []byte{0xA8, 0x80, 0x05, 0x00, 3, 0xAA}
	f, ok := ParseVP9(key)
	if !ok || !f.Keyframe || !f.Start || f.End || f.SID != 0 || f.TID != 0 || !f.SpatialSwitch || f.TL0Pos == 0 {
		t.Fatalf("vp9 keyframe: %+v", f)
	}
	// Upper spatial layer of a keyframe picture: P=0 SID=1: a spatial switch point, not a keyframe.
	upper := []byte{0xAC, 0x80, 0x05, 0x02, 3}
	f, _ = ParseVP9(upper)
	if f.Keyframe || !f.SpatialSwitch || f.SID != 1 || !f.End {
		t.Fatalf("vp9 upper layer: %+v", f)
	}
	// Flexible inter picture: I=0 P=1 L=1 F=1 B=1; TID 2 U=1 SID 0; two P_DIFFs (N chains).
	flex := []byte{0x78, 0x50, 0x03, 0x02, 0xEE}
	f, ok = ParseVP9(flex)
	if !ok || f.Keyframe || f.SpatialSwitch || f.TID != 2 || !f.SwitchUp || f.TL0Pos != 0 {
		t.Fatalf("vp9 flexible: %+v ok=%v", f, ok)
	}
	// Scalability structure: 3 spatial layers with sizes, one group with one reference.
	ss := []byte{0x0A, 0x58, 0, 1, 0, 1, 0, 2, 0, 2, 0, 4, 0, 4, 1, 0x04, 1, 0xAB}
	if _, ok := ParseVP9(ss); !ok {
		t.Fatal("vp9 with SS rejected")
	}
	for _, bad := range [][]byte{{}, {0x80}, {0xA0, 0x01}, {0x30}, {0x50, 0x01, 0x01, 0x01, 0x01}, {0x02, 0x18}} {
		if _, ok := ParseVP9(bad); ok {
			t.Errorf("accepted %x", bad)
		}
	}
}

func TestH264Keyframes(t *testing.T) {
	cases := []struct {
		name      string
		p         []byte
		key, good bool
	}{
		{"idr", []byte{0x65, 1}, true, true},
		{"non-idr slice", []byte{0x41, 1}, false, true},
		{"sps", []byte{0x67, 1}, true, true},
		{"stap-a sps+pps", []byte{0x78, 0, 2, 0x67, 1, 0, 2, 0x68, 1}, true, true},
		{"stap-a slice", []byte{0x78, 0, 2, 0x41, 1}, false, true},
		{"stap-a cut", []byte{0x78, 0, 9, 0x67}, false, false},
		{"fu-a idr start", []byte{0x7C, 0x85, 1}, true, true},
		{"fu-a idr middle", []byte{0x7C, 0x05, 1}, false, true},
		{"fu-a short", []byte{0x7C}, false, false},
		{"forbidden bit", []byte{0xE5}, false, false},
		{"stap-b", []byte{0x79, 0}, false, false},
	}
	for _, c := range cases {
		f, ok := ParseH264(c.p)
		if ok != c.good || (ok && f.Keyframe != c.key) {
			t.Errorf("%s: keyframe=%v ok=%v, want %v %v", c.name, f.Keyframe, ok, c.key, c.good)
		}
	}
}

func TestAV1AggregationHeader(t *testing.T) {
	if f, ok := ParseAV1([]byte{0x08}); !ok || !f.Keyframe || !f.Start {
		t.Fatalf("new sequence: %+v", f)
	}
	if f, ok := ParseAV1([]byte{0x80}); !ok || f.Start || f.Keyframe {
		t.Fatalf("continuation: %+v", f)
	}
	if _, ok := ParseAV1([]byte{0x88}); ok {
		t.Fatal("keyframe continuing an OBU accepted")
	}
}

func TestAudioLevel(t *testing.T) {
	if l, v, ok := AudioLevel([]byte{0x80 | 30}); !ok || !v || l != 30 {
		t.Fatalf("got %d %v %v", l, v, ok)
	}
	if _, _, ok := AudioLevel(nil); ok {
		t.Fatal("empty element accepted")
	}
}

func TestCodecNames(t *testing.T) {
	for name, want := range map[string]Codec{"video/VP8": CodecVP8, "vp9": CodecVP9, "audio/opus": CodecOpus, "H264": CodecH264, "av1": CodecAV1, "x": CodecUnknown} {
		if got := CodecByName(name); got != want {
			t.Errorf("%s: %v", name, got)
		}
	}
	if CodecVP8.String() != "vp8" || !CodecAV1.IsVideo() || CodecOpus.IsVideo() || CodecOpus.ClockRate() != 48000 {
		t.Fatal("codec properties")
	}
}

// TestCodecTable: every codec's name finds it again, and each is audio or video with the clock
// rate and channel count its SDP rtpmap carries.
func TestCodecTable(t *testing.T) {
	type props struct {
		video    bool
		clock    uint32
		channels uint16
	}
	want := map[Codec]props{
		CodecOpus: {false, 48000, 2}, CodecMultiopus: {false, 48000, 6}, CodecG722: {false, 8000, 0},
		CodecPCMU: {false, 8000, 0}, CodecPCMA: {false, 8000, 0}, CodecVP8: {true, 90000, 0},
		CodecVP9: {true, 90000, 0}, CodecH264: {true, 90000, 0}, CodecAV1: {true, 90000, 0}, CodecH265: {true, 90000, 0},
	}
	for c := CodecUnknown + 1; c.String() != ""; c++ {
		w, ok := want[c]
		if !ok {
			t.Fatalf("codec %d (%s) is not in this table", c, c)
		}
		if got := (props{c.IsVideo(), c.ClockRate(), c.Channels()}); got != w {
			t.Errorf("%s: %+v, want %+v", c, got, w)
		}
		kind := "audio/"
		if w.video {
			kind = "video/"
		}
		if CodecByName(c.String()) != c || CodecByName(kind+strings.ToUpper(c.String())) != c {
			t.Errorf("%s is not found by its name", c)
		}
		delete(want, c)
	}
	if len(want) != 0 {
		t.Fatalf("codecs without a name: %v", want)
	}
	if CodecByName("audio/multiopus") != CodecMultiopus || CodecByName("opus") != CodecOpus {
		t.Fatal("multiopus and opus are told apart by their whole name")
	}
}
