package rtpbridge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
	"github.com/strata-rtc/strata/internal/sipptest"
)

// TestSippEchoesThroughTheBridge: the plain peer is real software, sipp's RTP echo (package
// sip-tester), which sends back whatever reaches its media port: the browser hears its own tone
// after the round trip browser → strata → sipp → strata → browser.
func TestSippEchoesThroughTheBridge(t *testing.T) {
	media := sipptest.Start(t, "-sn", "uas", "-rtp_echo", "-timeout", "60s").MediaPort

	s := newBridge(t, testFactory(t), loopback, Options{})
	browser := bridgetest.NewBrowser(t, 440, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.FromWebRTC(ctx, browser.Offer()); err != nil {
		t.Fatal(err)
	}
	answer := fmt.Sprintf("v=0\r\no=user1 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+
		"m=audio %d RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n", media)
	jsep, err := s.FromPlain(ctx, answer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal(err)
	}
	browser.SetAnswer(jsep)
	browser.Send(ctx)
	bridgetest.WaitFor(t, 8*time.Second, "the browser hearing its tone back from sipp", func() bool {
		return browser.ToneLevel(440, 1600) > 0.1
	})
	if st := s.Stats(); st.Peer != fmt.Sprintf("127.0.0.1:%d", media) || st.Audio.FromPlain.Packets == 0 {
		t.Errorf("stats %+v", st)
	}
}
