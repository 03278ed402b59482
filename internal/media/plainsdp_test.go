package media

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pion/webrtc/v4"
)

func plainCorpus(tb testing.TB) map[string]string {
	tb.Helper()
	files, err := filepath.Glob("testdata/plainsdp/*.sdp")
	if err != nil || len(files) == 0 {
		tb.Fatal("no plain SDP corpus", err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

func TestPlainSDPOfRealPhones(t *testing.T) {
	c := plainCorpus(t)
	cases := []struct {
		file                string
		kinds, codec, dtmf  string
		addr, dir           string
		rtcpPort, mux, keys int
	}{
		{"baresip.sdp", "audio,video", "audio/opus", "audio/telephone-event", // at 8 kHz: kept with Opus
			"192.168.1.20", "sendrecv", 10001, 0, 0},
		{"sipp_uac.sdp", "audio", "audio/PCMU", "", "127.0.1.1", "sendrecv", 6001, 0, 0},
		{"sipp_pcap.sdp", "audio,video", "audio/PCMA", "audio/telephone-event", "10.0.0.5", "sendrecv", 6001, 0, 0},
		{"janus_nosip_srtp.sdp", "audio,video", "audio/opus", "audio/telephone-event", "203.0.113.7", "sendrecv", 20041, 0, 1},
		{"linphone_ipv6_hold.sdp", "audio,video", "audio/opus", "audio/telephone-event", "2001:db8::10", "recvonly", 7079, 1, 0},
		{"asterisk_moh.sdp", "audio", "audio/PCMU", "audio/telephone-event", "192.0.2.1", "sendonly", 12723, 0, 0},
	}
	for _, tc := range cases {
		d, err := ParsePlainSDP(c[tc.file])
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		var kinds []string
		for _, m := range d.Media {
			kinds = append(kinds, m.Kind)
		}
		a := d.Media[0]
		codec, dtmf, ok := ChooseBridgeCodec(a.Codecs, nil)
		gotDTMF := ""
		if dtmf != nil {
			gotDTMF = dtmf.MimeType
		}
		mux := 0
		if a.RTCPMux {
			mux = 1
		}
		if strings.Join(kinds, ",") != tc.kinds || !ok || codec.MimeType != tc.codec || gotDTMF != tc.dtmf ||
			a.Addr.String() != tc.addr || a.Direction != tc.dir || a.RTCPPort != tc.rtcpPort || mux != tc.mux || len(a.Crypto) != tc.keys {
			t.Errorf("%s: kinds %v codec %s dtmf %q addr %s dir %s rtcp %d mux %v keys %d", tc.file, kinds, codec.MimeType,
				gotDTMF, a.Addr, a.Direction, a.RTCPPort, a.RTCPMux, len(a.Crypto))
		}
	}
}

// The telephone-event kept is the one at the codec's clock rate (Linphone offers three).
func TestTelephoneEventFollowsTheCodecRate(t *testing.T) {
	d, err := ParsePlainSDP(plainCorpus(t)["linphone_ipv6_hold.sdp"])
	if err != nil {
		t.Fatal(err)
	}
	_, dtmf, _ := ChooseBridgeCodec(d.Media[0].Codecs, nil)
	if dtmf == nil || dtmf.ClockRate != 48000 || dtmf.PayloadType != 101 {
		t.Fatalf("dtmf %+v", dtmf)
	}
	have := []webrtc.RTPCodecParameters{{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/PCMA", ClockRate: 8000}, PayloadType: 8}}
	c, dtmf, ok := ChooseBridgeCodec(d.Media[0].Codecs, have)
	if !ok || c.PayloadType != 8 || dtmf == nil || dtmf.PayloadType != 100 {
		t.Fatalf("with only PCMA: %+v %+v %v", c, dtmf, ok)
	}
}

// An Opus call keeps telephone-event/8000 when both sides have it and not the codec's rate
// (baresip answering Chrome's offer), and still prefers the codec's rate when both have it.
func TestTelephoneEventAt8kWithOpus(t *testing.T) {
	opus := testFormat(111, "audio/opus", 48000, "minptime=10;useinbandfec=1")
	ev48, ev8 := testFormat(110, TelephoneEvent, 48000, ""), testFormat(126, TelephoneEvent, 8000, "")
	chrome := []webrtc.RTPCodecParameters{opus, testFormat(0, "audio/PCMU", 8000, ""), ev48, ev8}
	_, dtmf, ok := ChooseBridgeCodec([]webrtc.RTPCodecParameters{opus, ev8}, chrome)
	if !ok || dtmf == nil || dtmf.PayloadType != 126 || dtmf.ClockRate != 8000 {
		t.Fatalf("baresip's answer: %+v", dtmf)
	}
	_, dtmf, _ = ChooseBridgeCodec([]webrtc.RTPCodecParameters{opus, ev8, ev48}, chrome)
	if dtmf == nil || dtmf.ClockRate != 48000 {
		t.Fatalf("both rates: %+v", dtmf)
	}
	_, dtmf, _ = ChooseBridgeCodec([]webrtc.RTPCodecParameters{opus, ev8}, chrome[:3])
	if dtmf != nil {
		t.Fatalf("telephone-event/8000 the browser did not offer: %+v", dtmf)
	}
}

func testFormat(pt uint8, mime string, rate uint32, fmtp string) webrtc.RTPCodecParameters {
	return webrtc.RTPCodecParameters{PayloadType: webrtc.PayloadType(pt),
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: mime, ClockRate: rate, SDPFmtpLine: fmtp}}
}

func TestBadPlainSDPIsRefused(t *testing.T) {
	base := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
	for name, tc := range map[string]struct {
		sdp  string
		want error
	}{
		"empty":       {"", ErrPlainSDP},
		"no m-line":   {base, ErrPlainSDP},
		"bad pt":      {base + "m=audio 4000 RTP/AVP 300\r\n", ErrPlainSDP},
		"no address":  {strings.Replace(base, "c=IN IP4 127.0.0.1\r\n", "", 1) + "m=audio 4000 RTP/AVP 0\r\n", ErrPlainSDP},
		"short key":   {base + "m=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAAA\r\n", ErrPlainCrypto},
		"bad method":  {base + "m=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 key:AAAA\r\n", ErrPlainCrypto},
		"huge":        {base + strings.Repeat("a=x\r\n", 5000), ErrPlainSDP},
		"many m-line": {base + strings.Repeat("m=audio 4000 RTP/AVP 0\r\n", 9), ErrPlainSDP},
	} {
		if _, err := ParsePlainSDP(tc.sdp); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	// An unknown suite is skipped, not refused: another line may have one strata has.
	d, err := ParsePlainSDP(base + "m=audio 4000 RTP/SAVP 0\r\na=crypto:1 AEAD_AES_256_GCM inline:AAAA\r\n")
	if err != nil || len(d.Media[0].Crypto) != 0 {
		t.Errorf("unknown suite: %v %+v", err, d)
	}
}

func TestPlainSDPRoundTrip(t *testing.T) {
	for name, s := range plainCorpus(t) {
		d, err := ParsePlainSDP(s)
		if err != nil {
			t.Fatal(name, err)
		}
		again, err := ParsePlainSDP(d.Marshal(netip.MustParseAddr("198.51.100.1")))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, d.Marshal(netip.MustParseAddr("198.51.100.1")))
		}
		samePlain(t, name, d, again)
	}
}

// samePlain checks what a bridge reads survives writing: kinds, ports, formats, keys, direction.
func samePlain(t *testing.T, name string, a, b *PlainSDP) {
	t.Helper()
	if len(a.Media) != len(b.Media) {
		t.Fatalf("%s: %d m-lines, then %d", name, len(a.Media), len(b.Media))
	}
	for i := range a.Media {
		x, y := a.Media[i], b.Media[i]
		if x.Kind != y.Kind || x.Port != y.Port || (x.Port != 0 && (len(x.Codecs) != len(y.Codecs) ||
			len(x.Crypto) != len(y.Crypto) || x.Direction != y.Direction || x.RTCPMux != y.RTCPMux)) {
			t.Fatalf("%s m-line %d: %+v, then %+v", name, i, x, y)
		}
		for j := range x.Codecs {
			if x.Port != 0 && (x.Codecs[j].PayloadType != y.Codecs[j].PayloadType || !strings.EqualFold(x.Codecs[j].MimeType, y.Codecs[j].MimeType)) {
				t.Fatalf("%s m-line %d format %d: %+v, then %+v", name, i, j, x.Codecs[j], y.Codecs[j])
			}
		}
	}
}

// FuzzPlainSDP: any input is parsed or refused without panicking; what is accepted is written
// back as SDP that parses to the same m-lines, and choosing a codec from it does not panic.
func FuzzPlainSDP(f *testing.F) {
	for _, s := range plainCorpus(f) {
		f.Add(s)
	}
	f.Add("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 1 RTP/AVP 0\r\na=rtpmap:0 /\r\na=rtcp:x\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParsePlainSDP(s)
		if err != nil {
			return
		}
		for _, m := range d.Media {
			ChooseBridgeCodec(m.Codecs, nil)
			BridgeFormats(m.Codecs)
		}
		again, err := ParsePlainSDP(d.Marshal(netip.MustParseAddr("127.0.0.1")))
		if err != nil {
			t.Fatalf("written SDP does not parse: %v\n%s", err, d.Marshal(netip.MustParseAddr("127.0.0.1")))
		}
		samePlain(t, "fuzz", d, again)
	})
}
