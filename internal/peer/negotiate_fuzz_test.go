package peer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
)

// FuzzAnswer negotiates arbitrary offers with a real PeerConnection: whatever the offer, Answer
// returns an answer or an error, never panics or hangs, and the peer closes cleanly after.
func FuzzAnswer(f *testing.F) {
	c := newClient(f)
	c.addMedia(f)
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(offer.SDP)
	f.Add(strings.ReplaceAll(offer.SDP, "a=setup:actpass", "a=setup:holdconn"))
	f.Add(strings.ReplaceAll(offer.SDP, "UDP/TLS/RTP/SAVPF", "RTP/AVP"))
	f.Add("v=0\r\no=- 0 0 IN IP4 0\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=rtpmap:96 VP8/90000\r\n")
	m := testMedia()
	m.ICE.FullTrickle = true // answer at once: the fuzzer is after the parsing, not the gathering
	fac := newTestFactory(f, m)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := fac.New(Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close("fuzz")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: s})
		if err == nil && !strings.HasPrefix(answer.SDP, "v=0") {
			t.Fatalf("answer without a session description: %q", answer.SDP)
		}
	})
}
