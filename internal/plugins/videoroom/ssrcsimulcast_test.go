package videoroom

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// offerWith is a Chrome-like publisher offer (audio, then video) whose video m-line ends with the
// given attribute lines (the SSRC block).
func offerWith(videoLines ...string) string {
	lines := []string{
		"v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1", "a=extmap-allow-mixed",
		"a=msid-semantic: WMS s",
		"m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd", "a=ice-pwd:abcdefghijklmnopqrstuvwx",
		"a=fingerprint:sha-256 7C:52:56:FF:53:E1:26:C7:8F:10:59:39:7E:29:92:61:0D:7D:93:CB:88:50:9B:60:B1:B3:D8:DD:3E:B1:F6:5B",
		"a=setup:actpass", "a=mid:0", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid", "a=sendrecv", "a=msid:s a", "a=rtcp-mux",
		"a=rtpmap:111 opus/48000/2", "a=ssrc:11 cname:c", "a=ssrc:11 msid:s a",
		"m=video 9 UDP/TLS/RTP/SAVPF 96 97", "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd", "a=ice-pwd:abcdefghijklmnopqrstuvwx",
		"a=fingerprint:sha-256 7C:52:56:FF:53:E1:26:C7:8F:10:59:39:7E:29:92:61:0D:7D:93:CB:88:50:9B:60:B1:B3:D8:DD:3E:B1:F6:5B",
		"a=setup:actpass", "a=mid:1", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
		"a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
		"a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id", "a=sendrecv", "a=msid:s v", "a=rtcp-mux",
		"a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
	}
	return strings.Join(append(lines, videoLines...), "\r\n") + "\r\n"
}

// ssrcLines declares SSRCs with a=ssrc cname and msid lines, as Chrome does.
func ssrcLines(ssrcs ...uint32) []string {
	var out []string
	for _, s := range ssrcs {
		out = append(out, fmt.Sprintf("a=ssrc:%d cname:c", s), fmt.Sprintf("a=ssrc:%d msid:s v", s))
	}
	return out
}

// chromeSIM is the block janus.js's munging produces: FID of the first layer, the SIM group, FIDs
// of the others, then the SSRC lines.
var chromeSIM = append([]string{
	"a=ssrc-group:FID 100 101", "a=ssrc-group:SIM 100 200 300", "a=ssrc-group:FID 200 201", "a=ssrc-group:FID 300 301",
}, ssrcLines(100, 101, 200, 201, 300, 301)...)

func TestSSRCSimulcastParsing(t *testing.T) {
	type want struct {
		layers []ssrcLayer
		hidden []uint32
		err    string
	}
	cases := []struct {
		name  string
		block []string
		want  want
	}{
		{"three layers with RTX, as janus.js munges", chromeSIM,
			want{layers: []ssrcLayer{{100, 101}, {200, 201}, {300, 301}}, hidden: []uint32{200, 201, 300, 301}}},
		{"two layers without RTX", append([]string{"a=ssrc-group:SIM 7 8"}, ssrcLines(7, 8)...),
			want{layers: []ssrcLayer{{7, 0}, {8, 0}}, hidden: []uint32{8}}},
		{"groups after the SSRC lines", append(ssrcLines(100, 101, 200, 201), "a=ssrc-group:SIM 100 200", "a=ssrc-group:FID 200 201", "a=ssrc-group:FID 100 101"),
			want{layers: []ssrcLayer{{100, 101}, {200, 201}}, hidden: []uint32{200, 201}}},
		{"the group's order is the layer order", append([]string{"a=ssrc-group:SIM 300 100 200"}, ssrcLines(100, 200, 300)...),
			want{layers: []ssrcLayer{{300, 0}, {100, 0}, {200, 0}}, hidden: []uint32{100, 200}}},
		{"largest SSRC", append([]string{"a=ssrc-group:SIM 4294967295 1"}, ssrcLines(4294967295, 1)...),
			want{layers: []ssrcLayer{{4294967295, 0}, {1, 0}}, hidden: []uint32{1}}},
		{"more than three: the first three are layers, the rest hidden", append([]string{
			"a=ssrc-group:SIM 1 2 3 4", "a=ssrc-group:FID 4 5"}, ssrcLines(1, 2, 3, 4, 5)...),
			want{layers: []ssrcLayer{{1, 0}, {2, 0}, {3, 0}}, hidden: []uint32{2, 3, 4, 5}}},
		{"one SSRC is no simulcast", append([]string{"a=ssrc-group:SIM 100", "a=ssrc-group:FID 100 101"}, ssrcLines(100, 101)...), want{}},
		{"no SIM group", append([]string{"a=ssrc-group:FID 100 101"}, ssrcLines(100, 101)...), want{}},
		{"a malformed FID without SIM is left to Pion", append([]string{"a=ssrc-group:FID 100 x"}, ssrcLines(100)...), want{}},
		{"RID simulcast takes precedence", append([]string{"a=rid:h send", "a=rid:l send", "a=simulcast:send h;l"}, chromeSIM...), want{}},
		{"unknown SSRC", append([]string{"a=ssrc-group:SIM 100 200 400"}, ssrcLines(100, 200)...), want{err: "SSRC 400, which has no a=ssrc line"}},
		{"duplicate SSRC", append([]string{"a=ssrc-group:SIM 100 200 100"}, ssrcLines(100, 200)...), want{err: "lists SSRC 100 twice"}},
		{"non-numeric SSRC", append([]string{"a=ssrc-group:SIM 100 abc"}, ssrcLines(100)...), want{err: `invalid SSRC "abc"`}},
		{"hexadecimal SSRC", append([]string{"a=ssrc-group:SIM 100 0x10"}, ssrcLines(100, 16)...), want{err: `invalid SSRC "0x10"`}},
		{"zero SSRC", append([]string{"a=ssrc-group:SIM 100 0"}, ssrcLines(100)...), want{err: `invalid SSRC "0"`}},
		{"SSRC above 32 bits", append([]string{"a=ssrc-group:SIM 100 4294967296"}, ssrcLines(100)...), want{err: `invalid SSRC "4294967296"`}},
		{"negative SSRC", append([]string{"a=ssrc-group:SIM 100 -5"}, ssrcLines(100)...), want{err: `invalid SSRC "-5"`}},
		{"malformed single SSRC", []string{"a=ssrc-group:SIM x"}, want{err: `invalid SSRC "x"`}},
		{"empty group", append([]string{"a=ssrc-group:SIM"}, ssrcLines(100)...), want{err: "empty a=ssrc-group:SIM"}},
		{"two SIM groups", append([]string{"a=ssrc-group:SIM 100 200", "a=ssrc-group:SIM 100 200"}, ssrcLines(100, 200)...), want{err: "more than one"}},
		{"a layer that is an RTX stream", append([]string{"a=ssrc-group:SIM 100 101", "a=ssrc-group:FID 100 101"}, ssrcLines(100, 101)...),
			want{err: "SSRC 101, which is an RTX stream"}},
		{"FID with one SSRC", append([]string{"a=ssrc-group:SIM 100 200", "a=ssrc-group:FID 100"}, ssrcLines(100, 200)...), want{err: "needs two SSRCs"}},
		{"FID with a bad SSRC", append([]string{"a=ssrc-group:SIM 100 200", "a=ssrc-group:FID 100 1e3"}, ssrcLines(100, 200)...), want{err: `invalid SSRC "1e3"`}},
		{"two RTX streams for one layer", append([]string{"a=ssrc-group:SIM 100 200", "a=ssrc-group:FID 100 101", "a=ssrc-group:FID 100 102"}, ssrcLines(100, 200)...),
			want{err: "repeats an SSRC"}},
		{"an SSRC of another m-line", append([]string{"a=ssrc-group:SIM 100 11"}, ssrcLines(100, 11)...), want{err: "SSRC 11 of the SIM group of m-line 1 is also in m-line 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines, err := describeOffer(offerWith(c.block...))
			if c.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.want.err) {
					t.Fatalf("error %v, want one containing %q", err, c.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := lines["1"]
			if !slices.Equal(got.layers, c.want.layers) || !slices.Equal(got.hidden, c.want.hidden) {
				t.Fatalf("layers %v hidden %v, want %v %v", got.layers, got.hidden, c.want.layers, c.want.hidden)
			}
			if a := lines["0"]; a.layers != nil || a.hidden != nil {
				t.Fatalf("audio m-line has layers %v", a)
			}
		})
	}
}

func TestAudioSIMGroupIsIgnored(t *testing.T) {
	offer := strings.Replace(offerWith(ssrcLines(100)...), "a=ssrc:11 cname:c", "a=ssrc-group:SIM 11 12\r\na=ssrc:11 cname:c\r\na=ssrc:12 cname:c", 1)
	lines, err := describeOffer(offer)
	if err != nil {
		t.Fatal(err)
	}
	if lines["0"].layers != nil {
		t.Fatalf("audio layers %v", lines["0"].layers)
	}
}

// TestOfferForPion: Pion sees the base layer and its RTX only; the rest of the offer is unchanged.
func TestOfferForPion(t *testing.T) {
	offer := offerWith(chromeSIM...)
	lines, err := describeOffer(offer)
	if err != nil {
		t.Fatal(err)
	}
	got := offerForPion(offer, lines)
	var removed []string
	for line := range strings.Lines(offer) {
		if !strings.Contains(got, line) {
			removed = append(removed, strings.TrimSpace(line))
		}
	}
	want := []string{
		"a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id", "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
		"a=ssrc-group:SIM 100 200 300", "a=ssrc-group:FID 200 201", "a=ssrc-group:FID 300 301",
	}
	want = append(want, ssrcLines(200, 201, 300, 301)...)
	if !slices.Equal(removed, want) {
		t.Fatalf("removed\n%s\nwant\n%s", strings.Join(removed, "\n"), strings.Join(want, "\n"))
	}
	if n := strings.Count(offer, "\r\n") - strings.Count(got, "\r\n"); n != len(want) {
		t.Fatalf("%d lines removed, want %d", n, len(want))
	}
	again, err := describeOffer(got)
	if err != nil {
		t.Fatal(err)
	}
	if l := again["1"]; l.layers != nil || l.hidden != nil {
		t.Fatalf("Pion's offer still has simulcast: %v", l)
	}
	// With RID simulcast elsewhere in the offer the RID extensions stay.
	mixed := strings.Replace(offer, "a=msid:s a", "a=msid:s a\r\na=rid:x send", 1)
	if lines, err = describeOffer(mixed); err != nil {
		t.Fatal(err)
	}
	if got := offerForPion(mixed, lines); !strings.Contains(got, "sdes:rtp-stream-id") || strings.Contains(got, "a=ssrc:200") {
		t.Fatalf("mixed offer for Pion:\n%s", got)
	}
	// Without SSRC simulcast the offer is untouched.
	plain := offerWith(append([]string{"a=ssrc-group:FID 100 101"}, ssrcLines(100, 101)...)...)
	if lines, err = describeOffer(plain); err != nil {
		t.Fatal(err)
	}
	if offerForPion(plain, lines) != plain {
		t.Fatal("an offer without SSRC simulcast was changed")
	}
}

// TestPionRefusesSIMButTakesOfferForPion documents why offerForPion exists: Pion v4 in Unified
// Plan takes an m-line with several media SSRCs as Plan B and cannot answer it.
func TestPionRefusesSIMButTakesOfferForPion(t *testing.T) {
	offer := offerWith(chromeSIM...)
	lines, err := describeOffer(offer)
	if err != nil {
		t.Fatal(err)
	}
	try := func(s string) error {
		pc, err := webrtc.NewPeerConnection(webrtc.Configuration{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = pc.Close() }()
		if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: s}); err != nil {
			return err
		}
		_, err = pc.CreateAnswer(nil)
		return err
	}
	if err := try(offer); err == nil || !strings.Contains(err.Error(), "PlanB") {
		t.Fatalf("Pion took the SIM offer (err %v): offerForPion may no longer be needed", err)
	}
	if err := try(offerForPion(offer, lines)); err != nil {
		t.Fatalf("Pion refused the offer for Pion: %v", err)
	}
}

// FuzzSSRCSimulcast feeds arbitrary attribute lines into the video m-line of an offer: parsing
// never panics; what it accepts is a valid layer set, and Pion's offer keeps none of it.
func FuzzSSRCSimulcast(f *testing.F) {
	for _, seed := range [][]string{
		chromeSIM, {"a=ssrc-group:SIM 1 2 3 4 5", "a=ssrc:1 x", "a=ssrc:2 x", "a=ssrc:3 x", "a=ssrc:4 x", "a=ssrc:5 x"},
		{"a=ssrc-group:SIM 100 abc"}, {"a=ssrc-group:FID 1 2", "a=ssrc-group:SIM 1 3", "a=ssrc:1 c", "a=ssrc:3 c"},
		{"a=ssrc-group:SIM 1 1"}, {"a=ssrc-group:SIM", "a=ssrc-group:FID"}, {"a=ssrc-group:SIM 11 12", "a=ssrc:12 c"},
	} {
		f.Add(strings.Join(seed, "\r\n"))
	}
	f.Fuzz(func(t *testing.T, block string) {
		offer := offerWith(strings.Split(block, "\r\n")...)
		lines, err := describeOffer(offer)
		if err != nil {
			return
		}
		v := lines["1"]
		if v.layers == nil {
			if v.hidden != nil {
				t.Fatalf("hidden SSRCs %v without layers", v.hidden)
			}
			return
		}
		seen := map[uint32]bool{}
		for _, l := range v.layers {
			if l.ssrc == 0 || seen[l.ssrc] || l.rtx != 0 && (seen[l.rtx] || l.rtx == l.ssrc) {
				t.Fatalf("bad layers %v", v.layers)
			}
			seen[l.ssrc], seen[l.rtx] = true, l.rtx != 0
		}
		if len(v.layers) < 2 || len(v.layers) > 3 {
			t.Fatalf("%d layers", len(v.layers))
		}
		for _, s := range v.hidden {
			if s == v.layers[0].ssrc || s == v.layers[0].rtx {
				t.Fatalf("base layer hidden: %v %v", v.layers, v.hidden)
			}
		}
		pion := offerForPion(offer, lines)
		var parsed sdp.SessionDescription
		if err := parsed.UnmarshalString(pion); err != nil {
			t.Fatalf("Pion's offer does not parse: %v", err)
		}
		for _, a := range parsed.MediaDescriptions[1].Attributes {
			if a.Key == sdp.AttrKeySSRCGroup && strings.HasPrefix(a.Value, "SIM") {
				t.Fatalf("SIM group left for Pion: %s", a.Value)
			}
			if a.Key == sdp.AttrKeySSRC {
				if id, err := parseSSRC(strings.SplitN(a.Value, " ", 2)[0]); err == nil && slices.Contains(v.hidden, id) {
					t.Fatalf("hidden SSRC %d left for Pion", id)
				}
			}
		}
	})
}

// TestRIDSimulcastRTX: RID simulcast is answered with RTX only when Pion can tell the RTX streams
// from the layers: a browser's offer (no a=ssrc lines, the repair extension offered) keeps RTX; an
// offer that declares its RTX streams with FID groups (a Pion publisher, whose RTX packets carry
// the layer's RID) or lacks the repair extension does not. Without RIDs RTX is Pion's business.
func TestRIDSimulcastRTX(t *testing.T) {
	rids := []string{"a=rid:f send", "a=rid:h send", "a=rid:q send", "a=simulcast:send f;h;q"}
	noRepair := func(s string) string {
		return strings.Replace(s, "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id\r\n", "", 1)
	}
	for _, c := range []struct {
		name  string
		offer string
		want  bool
	}{
		{"browser RID simulcast", offerWith(rids...), false},
		{"RID simulcast declaring its RTX", offerWith(append(slices.Clone(rids), "a=ssrc-group:FID 100 101", "a=ssrc-group:FID 200 201")...), true},
		{"RID simulcast without the repair extension", noRepair(offerWith(rids...)), true},
		{"no simulcast, FID group", offerWith(append([]string{"a=ssrc-group:FID 100 101"}, ssrcLines(100, 101)...)...), false},
		{"SSRC simulcast", offerWith(chromeSIM...), false},
	} {
		lines, err := describeOffer(c.offer)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := lines["1"].noRTX; got != c.want {
			t.Errorf("%s: answered without RTX %v, want %v", c.name, got, c.want)
		}
		if lines["0"].noRTX {
			t.Errorf("%s: the audio m-line lost RTX", c.name)
		}
	}
}
