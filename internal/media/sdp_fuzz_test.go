package media

import (
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// fuzzOffer is a browser-like offer with a simulcast video m-line: the seed the SDP fuzzer mutates.
const fuzzOffer = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\n" +
	"m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=rtpmap:111 opus/48000/2\r\n" +
	"a=fmtp:111 minptime=10;useinbandfec=1\r\n" +
	"m=video 9 UDP/TLS/RTP/SAVPF 96 97 102\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\na=rtpmap:96 VP8/90000\r\n" +
	"a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\na=rtpmap:102 H264/90000\r\n" +
	"a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r\n" +
	"a=rid:h send\r\na=rid:m send\r\na=rid:l send\r\na=simulcast:send h;m;l\r\n"

// FuzzSDP parses arbitrary session descriptions and runs strata's SDP helpers (rids, simulcast
// layers, fmtp parameters, codec matching) on whatever Pion's parser accepts: nothing may panic,
// layers stay in 0..2 and a picked codec is one that was offered.
func FuzzSDP(f *testing.F) {
	f.Add(fuzzOffer, "lmh")
	f.Add(strings.ReplaceAll(fuzzOffer, "a=rid:m send", "a=rid:m recv"), "")
	f.Add("v=0\r\no=- 0 0 IN IP4 0\r\ns=-\r\nt=0 0\r\nm=video 9 RTP/AVP 96\r\na=rid:\r\na=fmtp:96 ;;=;profile-id=\r\n", "hml")
	f.Fuzz(func(t *testing.T, s, order string) {
		var d sdp.SessionDescription
		if d.Unmarshal([]byte(s)) != nil {
			return
		}
		for _, md := range d.MediaDescriptions {
			rids := SendRIDs(md)
			for rid, layer := range SimulcastLayers(rids, order) {
				if layer < 0 || layer > 2 || !contains(rids, rid) {
					t.Fatalf("rid %q layer %d from %v", rid, layer, rids)
				}
			}
			var offered []webrtc.RTPCodecParameters
			for i, a := range md.Attributes {
				if a.Key != "fmtp" {
					continue
				}
				c := CodecByName([]string{"vp8", "vp9", "h264", "av1", "opus"}[i%5])
				capab := Capability(c, a.Value)
				_ = FmtpParam(a.Value, "apt")
				offered = append(offered, webrtc.RTPCodecParameters{RTPCodecCapability: capab, PayloadType: webrtc.PayloadType(i)})
			}
			if p, ok := PickCodec(offered, []string{"h264", "vp8", "opus"}, FmtpParam(order, "profile-level-id")); ok && !hasParams(offered, p) {
				t.Fatalf("picked %+v, not offered", p)
			}
			for _, o := range offered {
				_, _ = RTXFor(o.PayloadType, offered)
				_ = WithRTX(o, offered)
				_, _ = MatchCodec(o.RTPCodecCapability, offered)
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func hasParams(list []webrtc.RTPCodecParameters, p webrtc.RTPCodecParameters) bool {
	for _, v := range list {
		if v.PayloadType == p.PayloadType && v.MimeType == p.MimeType {
			return true
		}
	}
	return false
}

// FuzzParsePacket runs the forwarder's per-packet parse (RTP header, codec payload descriptor and
// the Dependency Descriptor extension) on arbitrary packets for every codec.
func FuzzParsePacket(f *testing.F) {
	dd := append([]byte{0x90, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE, 0, 3}, byte(0x10|(len(l1t3Structure(0, 1))-1)))
	dd = append(append(dd, l1t3Structure(0, 1)...), make([]byte, 12)...)
	f.Add(byte(CodecAV1), dd[:16+((len(dd)-16)/4)*4])
	f.Add(byte(CodecVP8), []byte{0x80, 0xE0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x90, 0xE0, 0x92, 0x34, 7, 0xA0, 0x00, 1, 2})
	f.Add(byte(CodecVP9), []byte{0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE, 0, 1, 0x10, 0xAA, 0, 0, 0xA8, 0x80, 0x05, 0x00})
	f.Add(byte(CodecH264), []byte{0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x7C, 0x85, 1})
	f.Fuzz(func(t *testing.T, codec byte, pkt []byte) {
		h, ok := ParseRTP(pkt)
		if !ok {
			return
		}
		var d DDParser
		for _, id := range []uint8{0, 1} {
			fl, ok := ParsePacket(Codec(codec%10), pkt, &h, id, &d)
			if ok && (fl.SID > 7 || fl.TID > 7) {
				t.Fatalf("layer ids out of range: %+v", fl)
			}
		}
	})
}
