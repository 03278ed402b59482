package rtpbridge

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
)

// TestTelephoneEvent8kWithOpus: a browser offering Opus with telephone-event at 48 and 8 kHz (as
// Chrome does) and a phone answering Opus with telephone-event/8000 only (as baresip does) keep
// telephone-event/8000 in the browser's answer; the events go both ways with their payload types
// mapped (126 on the browser's side, 101 on the phone's), and the phone's digit is reported with
// its duration counted at 8 kHz.
func TestTelephoneEvent8kWithOpus(t *testing.T) {
	s := newBridge(t, testFactory(t), loopback, Options{})
	var (
		mu     sync.Mutex
		digits []string
	)
	s.OnDTMF(func(d string, dur time.Duration) {
		mu.Lock()
		digits = append(digits, fmt.Sprint(d, " ", dur))
		mu.Unlock()
	})
	browser := bridgetest.NewOpusBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	offer, err := s.FromWebRTC(ctx, browser.Offer())
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := media.ParsePlainSDP(offer)
	if err != nil {
		t.Fatal(err)
	}
	phone := newPlainPeer(t, parsed.Media[0].Port)
	answer := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+
		"m=audio %d RTP/AVP 111 101\r\na=rtpmap:111 opus/48000/2\r\na=rtpmap:101 telephone-event/8000\r\n",
		phone.conn.LocalAddr().(*net.UDPAddr).Port)
	jsep, err := s.FromPlain(ctx, answer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(jsep.SDP, "telephone-event/8000") || strings.Contains(jsep.SDP, "telephone-event/48000") {
		t.Fatalf("the browser's answer:\n%s", jsep.SDP)
	}
	browser.SetAnswer(jsep)
	browser.Send(ctx)
	for i := range 20 { // the phone's Opus, then digit 5 of 100 ms (800 at 8 kHz), its end three times
		phone.send(111, false, uint32(i*960), []byte{0xf8, 0xff, 0xfe})
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 3 {
		phone.send(101, i == 0, 20*960, []byte{5, 0x80 | 10, 0x03, 0x20})
	}
	bridgetest.WaitFor(t, 3*time.Second, "the phone's digit in the browser", func() bool {
		return string(browser.Events()) == "\x05"
	})
	if !browser.SendDTMF(7) {
		t.Fatal("the browser has no telephone-event/8000")
	}
	phone.read(500 * time.Millisecond)
	if phone.pts[111] < 10 || phone.pts[101] < 5 || len(phone.pts) != 2 {
		t.Errorf("the phone received %v", phone.pts)
	}
	if pts := browser.AudioPayloadTypes(); pts[126] == 0 || pts[111] == 0 || len(pts) != 2 {
		t.Errorf("the browser received %v", pts)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(digits) != 1 || digits[0] != "5 100ms" {
		t.Errorf("digits %v", digits)
	}
}
