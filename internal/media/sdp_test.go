package media

import (
	"testing"

	"github.com/pion/webrtc/v4"
)

func codecParams(pt int, mime, fmtp string) webrtc.RTPCodecParameters {
	return webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: mime, ClockRate: 90000, SDPFmtpLine: fmtp},
		PayloadType:        webrtc.PayloadType(pt),
	}
}

func TestFmtpParam(t *testing.T) {
	for _, c := range []struct{ fmtp, key, want string }{
		{"apt=96", "apt", "96"},
		{"level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42E01F", "profile-level-id", "42e01f"},
		{" profile-id = 2 ; x=1", "profile-id", "2"},
		{"minptime=10;useinbandfec=1", "apt", ""},
		{"apt", "apt", ""},
		{"", "apt", ""},
		{"APT=97", "apt", "97"},
	} {
		if got := FmtpParam(c.fmtp, c.key); got != c.want {
			t.Errorf("FmtpParam(%q, %q) = %q, want %q", c.fmtp, c.key, got, c.want)
		}
	}
}

func TestRTXForMatchesTheExactPayloadType(t *testing.T) {
	codecs := []webrtc.RTPCodecParameters{
		codecParams(9, "audio/G722", ""),
		codecParams(96, "video/VP8", ""),
		codecParams(97, "video/rtx", "apt=96"),
		codecParams(98, "video/VP9", "profile-id=0"),
		codecParams(99, "video/rtx", "apt=98"),
		codecParams(100, "video/rtx", "apt=9x"),
	}
	for _, c := range []struct {
		pt   int
		want int // 0: none
	}{{96, 97}, {98, 99}, {9, 0}, {97, 0}, {100, 0}} {
		rtx, ok := RTXFor(webrtc.PayloadType(c.pt), codecs)
		switch {
		case c.want == 0 && ok:
			t.Errorf("RTXFor(%d) = %d, want none (apt=%d must not match apt=%d6 or similar)", c.pt, rtx.PayloadType, c.pt, c.pt)
		case c.want != 0 && (!ok || int(rtx.PayloadType) != c.want):
			t.Errorf("RTXFor(%d) = %d ok=%v, want %d", c.pt, rtx.PayloadType, ok, c.want)
		}
	}
	if got := WithRTX(codecs[1], codecs); len(got) != 2 || got[1].PayloadType != 97 {
		t.Errorf("WithRTX(VP8) = %v", got)
	}
	if got := WithRTX(codecs[0], codecs); len(got) != 1 {
		t.Errorf("WithRTX(G722) = %v, want G722 alone", got)
	}
}

func TestSameFormat(t *testing.T) {
	h264 := func(fmtp string) webrtc.RTPCodecCapability {
		return webrtc.RTPCodecCapability{MimeType: "video/H264", SDPFmtpLine: fmtp}
	}
	vp9 := func(fmtp string) webrtc.RTPCodecCapability {
		return webrtc.RTPCodecCapability{MimeType: "video/VP9", SDPFmtpLine: fmtp}
	}
	for _, c := range []struct {
		name string
		a, b webrtc.RTPCodecCapability
		want bool
	}{
		{"h264 same profile, other level", h264("packetization-mode=1;profile-level-id=42e01f"), h264("profile-level-id=42E034;packetization-mode=1"), true},
		{"h264 constrained baseline vs baseline", h264("packetization-mode=1;profile-level-id=42e01f"), h264("packetization-mode=1;profile-level-id=42001f"), false},
		{"h264 high vs main", h264("packetization-mode=1;profile-level-id=640032"), h264("packetization-mode=1;profile-level-id=4d001f"), false},
		{"h264 packetization mode differs", h264("packetization-mode=1;profile-level-id=42e01f"), h264("profile-level-id=42e01f"), false},
		{"h264 defaults", h264(""), h264("profile-level-id=42000a;packetization-mode=0"), true},
		{"vp9 profile 0 default", vp9(""), vp9("profile-id=0"), true},
		{"vp9 profile 0 vs 2", vp9("profile-id=0"), vp9("profile-id=2"), false},
		{"mime differs", vp9(""), h264(""), false},
		{"vp8 case", webrtc.RTPCodecCapability{MimeType: "video/vp8"}, webrtc.RTPCodecCapability{MimeType: "video/VP8"}, true},
		{"av1 profile", webrtc.RTPCodecCapability{MimeType: "video/AV1"}, webrtc.RTPCodecCapability{MimeType: "video/AV1", SDPFmtpLine: "profile=1"}, false},
	} {
		if got := SameFormat(c.a, c.b); got != c.want {
			t.Errorf("%s: SameFormat = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMatchCodecPrefersTheSameProfile(t *testing.T) {
	have := []webrtc.RTPCodecParameters{
		codecParams(96, "video/VP8", ""),
		codecParams(102, "video/H264", "packetization-mode=1;profile-level-id=42001f"),
		codecParams(108, "video/H264", "packetization-mode=1;profile-level-id=42e01f"),
		codecParams(112, "video/H264", "packetization-mode=1;profile-level-id=640032"),
	}
	want := webrtc.RTPCodecCapability{MimeType: "video/H264", SDPFmtpLine: "profile-level-id=640034;packetization-mode=1"}
	if c, ok := MatchCodec(want, have); !ok || c.PayloadType != 112 {
		t.Fatalf("high profile matched %d ok=%v, want 112", c.PayloadType, ok)
	}
	want.SDPFmtpLine = "profile-level-id=f4001f;packetization-mode=1" // a profile the peer lacks
	if c, ok := MatchCodec(want, have); !ok || c.PayloadType != 102 {
		t.Fatalf("fallback matched %d ok=%v, want the first H.264 (102)", c.PayloadType, ok)
	}
	if _, ok := MatchCodec(webrtc.RTPCodecCapability{MimeType: "video/AV1"}, have); ok {
		t.Fatal("AV1 matched a peer without AV1")
	}
}

func TestPickCodec(t *testing.T) {
	offered := []webrtc.RTPCodecParameters{
		codecParams(96, "video/VP8", ""),
		codecParams(97, "video/rtx", "apt=96"),
		codecParams(98, "video/VP9", "profile-id=0"),
		codecParams(100, "video/VP9", "profile-id=2"),
		codecParams(102, "video/H264", "packetization-mode=1;profile-level-id=42001f"),
		codecParams(108, "video/H264", "packetization-mode=1;profile-level-id=42e01f"),
	}
	for _, c := range []struct {
		name    string
		names   []string
		profile string
		want    int // 0: none
	}{
		{"offerer's first", nil, "", 96},
		{"by name", []string{"vp9"}, "", 98},
		{"by name and profile", []string{"vp9"}, "2", 100},
		{"h264 profile, any case", []string{"H264"}, "42E01F", 108},
		{"room order", []string{"av1", "h264", "vp8"}, "", 102},
		{"nothing allowed offered", []string{"av1", "h265"}, "", 0},
		{"rtx is not a codec", []string{"rtx"}, "", 0},
		{"profile nobody has", []string{"vp9"}, "3", 0},
	} {
		got, ok := PickCodec(offered, c.names, c.profile)
		switch {
		case c.want == 0 && ok:
			t.Errorf("%s: picked %d, want none", c.name, got.PayloadType)
		case c.want != 0 && (!ok || int(got.PayloadType) != c.want):
			t.Errorf("%s: picked %d ok=%v, want %d", c.name, got.PayloadType, ok, c.want)
		}
	}
}

// TestCodecTraits: the codec facts the forwarding code asks about, and Pion's description of a
// codec.
func TestCodecTraits(t *testing.T) {
	for c := CodecOpus; c <= CodecH265; c++ {
		if CodecByName(c.MimeType()) != c {
			t.Errorf("%v is not found by its MIME type %q", c, c.MimeType())
		}
		if c.SVC() && !c.IsVideo() {
			t.Errorf("%v: SVC audio", c)
		}
	}
	if !CodecVP9.SVC() || !CodecAV1.SVC() || CodecVP8.SVC() || CodecH264.SVC() {
		t.Error("SVC: VP9 and AV1 only")
	}
	if !CodecVP9.KeepsDroppedPictureIDs() || CodecVP8.KeepsDroppedPictureIDs() {
		t.Error("only VP9 references pictures by picture-id difference")
	}
	if CodecUnknown.ClockRate() != 90000 || Codec(200).String() != "" || Codec(200).IsVideo() {
		t.Error("unknown codecs")
	}
	if c := Capability(CodecOpus, "minptime=10"); c.MimeType != "audio/opus" || c.ClockRate != 48000 || c.Channels != 2 || c.SDPFmtpLine != "minptime=10" {
		t.Errorf("Capability(opus) = %+v", c)
	}
	if c := Capability(CodecMultiopus, ""); c.MimeType != "audio/multiopus" || c.ClockRate != 48000 || c.Channels != 6 {
		t.Errorf("Capability(multiopus) = %+v", c)
	}
}
