package rtpbridge

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
)

// FuzzFromPlain feeds a plain peer's SDP to a fresh bridge both as an offer and as the answer to
// a browser's offer: it is applied or refused with one of the bridge's errors, never a panic, and
// what is applied gives the browser a description. Run it with -fuzzminimizetime 0s: Pion's
// background goroutines make an input's coverage vary, and minimizing would take all the time.
func FuzzFromPlain(f *testing.F) {
	files, _ := filepath.Glob("../media/testdata/plainsdp/*.sdp")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 0\r\nm=video 0 RTP/AVP 96\r\n")
	factory := testFactory(f)
	browserOffer := bridgetest.NewBrowser(f, 440, true).Offer()
	f.Fuzz(func(t *testing.T, sdp string) {
		for _, typ := range []webrtc.SDPType{webrtc.SDPTypeOffer, webrtc.SDPTypeAnswer} {
			p, err := factory.New(peer.Hooks{}, peer.WithBridgeCodecs())
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(loopback, p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if typ == webrtc.SDPTypeAnswer {
				if _, err := s.FromWebRTC(ctx, browserOffer); err != nil {
					t.Fatal(err)
				}
			}
			jsep, err := s.FromPlain(ctx, sdp, typ)
			cancel()
			if err == nil && jsep == nil {
				t.Errorf("%s applied without a description for the browser", typ)
			}
			_ = s.Close()
			p.Close("fuzz")
		}
	})
}
