package echotest

import (
	"testing"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
)

func TestParseVP8(t *testing.T) {
	key := vp8Payload(0x1234, 7, 2, true, 'x')
	info, ok := parseVP8(key)
	if !ok || !info.keyframe || !info.start || info.tid != 2 || !info.switchUp {
		t.Fatalf("keyframe descriptor: %+v ok=%v", info, ok)
	}
	if !info.hasPicture || !info.picID15 || info.picID != 2 || !info.hasTL0Index || info.tl0PicIdx != 4 {
		t.Fatalf("descriptor positions: %+v", info)
	}
	delta, _ := parseVP8(vp8Payload(1, 0, 0, false, 'x'))
	if delta.keyframe {
		t.Error("inter frame taken for a keyframe")
	}
	// Continuation packet (S=0): never a keyframe even if the byte after the descriptor is even.
	cont := []byte{0x80, 0x80, 0x81, 0x00, 0x00}
	if info, ok := parseVP8(cont); !ok || info.keyframe || info.start {
		t.Errorf("continuation: %+v", info)
	}
	// Minimal descriptor without extensions.
	if info, ok := parseVP8([]byte{0x10, 0x00}); !ok || !info.keyframe || info.hasPicture || info.tid != -1 {
		t.Errorf("minimal keyframe: %+v", info)
	}
	for _, bad := range [][]byte{nil, {0x80}, {0x80, 0x80}, {0x80, 0x80, 0x80}, {0x80, 0x20}} {
		if _, ok := parseVP8(bad); ok {
			t.Errorf("truncated % x accepted", bad)
		}
	}
}

// TestParseVP8AgreesWithPion cross-checks the descriptor positions against pion/rtp's VP8 parser.
func TestParseVP8AgreesWithPion(t *testing.T) {
	for _, p := range [][]byte{vp8Payload(0x1234, 9, 1, false, 0), vp8Payload(5, 0, 0, true, 0), {0x90, 0x80, 0x05, 0x00}} {
		var ref codecs.VP8Packet
		if _, err := ref.Unmarshal(p); err != nil {
			t.Fatal(err)
		}
		info, ok := parseVP8(p)
		if !ok {
			t.Fatalf("% x rejected", p)
		}
		var pic uint16
		if info.picID15 {
			pic = uint16(p[info.picID]&0x7f)<<8 | uint16(p[info.picID+1])
		} else {
			pic = uint16(p[info.picID] & 0x7f)
		}
		if pic != ref.PictureID || (ref.T == 1 && int8(ref.TID) != info.tid) || (ref.L == 1 && p[info.tl0PicIdx] != ref.TL0PICIDX) {
			t.Errorf("% x: ours %+v, pion %+v", p, info, ref)
		}
	}
}

func TestParseVP9(t *testing.T) {
	// I=1 (15-bit id), P=0, L=1, F=0, B=1, E=0, V=0: keyframe start of spatial layer 0.
	key := []byte{0xa8, 0x80, 0x01, 0x02<<5 | 0x10 | 0<<1, 0x07, 0xaa}
	info, ok := parseVP9(key)
	if !ok || !info.keyframe || !info.start || info.end || info.sid != 0 || info.tid != 2 || !info.switchUp {
		t.Fatalf("keyframe: %+v ok=%v", info, ok)
	}
	// P=1, L=1, E=1, SID 2 TID 1: inter frame end of spatial layer 2.
	upper := []byte{0x64, 0x01<<5 | 2<<1, 0x07, 0xaa}
	if info, ok := parseVP9(upper); !ok || info.keyframe || !info.end || info.sid != 2 || info.tid != 1 {
		t.Fatalf("upper layer: %+v ok=%v", info, ok)
	}
	// Flexible mode with two reference indices, then a scalability structure with sizes and groups.
	// P, L, F, B, V; layer byte; P_DIFF 3 (N) and 2; SS: one layer with size and one group (1 ref).
	flex := []byte{0x7a, 0x00, 0x03, 0x02, 0x18, 0, 1, 0, 1, 0x01, 0x04, 5, 0xaa}
	if info, ok := parseVP9(flex); !ok || info.sid != 0 || info.tid != 0 || info.keyframe || !info.start {
		t.Fatalf("flexible with SS: %+v ok=%v", info, ok)
	}
	for _, bad := range [][]byte{nil, {0x80}, {0x20}, {0x50, 0x01}, {0x02, 0x18}} {
		if _, ok := parseVP9(bad); ok {
			t.Errorf("truncated % x accepted", bad)
		}
	}
}

func TestParseH264AndAV1Keyframes(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    []byte
		key  bool
	}{
		{"IDR", []byte{0x65, 0x88}, true},
		{"non-IDR slice", []byte{0x41, 0x9a}, false},
		{"STAP-A with SPS", []byte{0x18, 0x00, 0x02, 0x67, 0x42, 0x00, 0x02, 0x68, 0xce}, true},
		{"STAP-A without", []byte{0x18, 0x00, 0x02, 0x06, 0x05}, false},
		{"FU-A IDR start", []byte{0x7c, 0x85, 0x00}, true},
		{"FU-A IDR middle", []byte{0x7c, 0x05, 0x00}, false},
	} {
		info, ok := parseH264(tc.p)
		if !ok || info.keyframe != tc.key {
			t.Errorf("%s: %+v ok=%v", tc.name, info, ok)
		}
	}
	if info, _ := parseAV1([]byte{0x18}); !info.keyframe {
		t.Error("AV1 N bit not a keyframe")
	}
	if info, _ := parseAV1([]byte{0x10}); info.keyframe {
		t.Error("AV1 without N bit taken for a keyframe")
	}
}

func FuzzParsePayloads(f *testing.F) {
	f.Add(vp8Payload(0x1234, 7, 2, true, 'x'))
	f.Add([]byte{0xa8, 0x80, 0x01, 0x50, 0x07, 0xaa})
	f.Add([]byte{0x7a, 0x00, 0x03, 0x02, 0x18, 0, 1, 0, 1, 0x01, 0x04, 5, 0xaa})
	f.Add([]byte{0x18, 0x00, 0x02, 0x67, 0x42})
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, codec := range []string{"vp8", "vp9", "h264", "av1", "opus"} {
			info, ok := parsePayload(codec, p)
			if !ok {
				continue
			}
			if info.hasPicture && (info.picID >= len(p) || (info.picID15 && info.picID+1 >= len(p))) {
				t.Fatalf("%s: picture id position %d outside %d bytes", codec, info.picID, len(p))
			}
			if info.hasTL0Index && info.tl0PicIdx >= len(p) {
				t.Fatalf("%s: TL0PICIDX position outside the payload", codec)
			}
			if info.tid > 7 || info.sid > 7 {
				t.Fatalf("%s: layer ids %d/%d", codec, info.tid, info.sid)
			}
		}
	})
}

func TestParseRTPAgreesWithPion(t *testing.T) {
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, Marker: true, PayloadType: 96, SequenceNumber: 65535, Timestamp: 123456, SSRC: 0xdeadbeef, CSRC: []uint32{1, 2}}, Payload: []byte{1, 2, 3, 4}}
	_ = pkt.SetExtension(3, []byte("h"))
	_ = pkt.SetExtension(5, []byte{9, 9})
	raw, err := pkt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := parseRTP(raw)
	if !ok || v.seq != 65535 || v.ts != 123456 || v.ssrc != 0xdeadbeef || !v.marker {
		t.Fatalf("header %+v", v)
	}
	if string(raw[v.payload:v.payloadEnd]) != string(pkt.Payload) {
		t.Fatalf("payload at %d:%d is % x", v.payload, v.payloadEnd, raw[v.payload:v.payloadEnd])
	}
	blankExtensions(raw, v, 3)
	var back rtp.Packet
	if err := back.Unmarshal(raw); err != nil {
		t.Fatalf("blanked packet does not parse: %v", err)
	}
	if back.GetExtension(3) != nil || string(back.GetExtension(5)) != "\x09\x09" {
		t.Errorf("after blanking id 3: ext3=%v ext5=%v", back.GetExtension(3), back.GetExtension(5))
	}
	padded := append([]byte(nil), raw...)
	padded[0] |= 0x20
	padded = append(padded, 0, 0, 3)
	if v, ok := parseRTP(padded); !ok || v.payloadEnd != len(padded)-3 {
		t.Errorf("padding not excluded: %+v", v)
	}
}

func FuzzParseRTP(f *testing.F) {
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: 1}, Payload: []byte{1, 2, 3}}
	_ = pkt.SetExtension(1, []byte("m"))
	raw, _ := pkt.Marshal()
	f.Add(raw)
	f.Add([]byte{0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x10, 0x00, 0x00, 0x01, 0x01, 0x01, 0x61, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := parseRTP(b)
		if !ok {
			return
		}
		if v.payload > v.payloadEnd || v.payloadEnd > len(b) || v.extEnd > v.payload {
			t.Fatalf("bounds %+v for %d bytes", v, len(b))
		}
		blankExtensions(b, v, 1, 2, 3)
		if v2, ok := parseRTP(b); !ok || v2.payload != v.payload {
			t.Fatal("blanking changed the packet layout")
		}
	})
}
