package rtpbridge

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
)

// plainPeer is a plain RTP endpoint written for the test: one socket per medium, RTCP on it too
// (rtcp-mux), announcing an address where it is not (a phone behind a NAT).
type plainPeer struct {
	t     *testing.T
	conn  *net.UDPConn
	to    *net.UDPAddr // strata's port
	seq   uint16
	pts   map[uint8]int
	rtcps []rtcp.Packet
}

func newPlainPeer(t *testing.T, strataPort int) *plainPeer {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &plainPeer{t: t, conn: c, to: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: strataPort}, pts: map[uint8]int{}}
}

func (p *plainPeer) send(pt uint8, marker bool, ts uint32, payload []byte) {
	pkt := make([]byte, media.HeaderSize, media.HeaderSize+len(payload))
	pkt[0], pkt[1] = 0x80, pt
	if marker {
		pkt[1] |= 0x80
	}
	p.seq++
	media.SetSeq(pkt, p.seq)
	media.SetTimestamp(pkt, ts)
	media.SetSSRC(pkt, 0xfeed)
	if _, err := p.conn.WriteToUDP(append(pkt, payload...), p.to); err != nil {
		p.t.Fatal(err)
	}
}

func (p *plainPeer) sendRTCP(pkts ...rtcp.Packet) {
	b, err := rtcp.Marshal(pkts)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.conn.WriteToUDP(b, p.to); err != nil {
		p.t.Fatal(err)
	}
}

// read collects what arrives for d: payload types of RTP, and RTCP packets.
func (p *plainPeer) read(d time.Duration) {
	buf := make([]byte, 1500)
	_ = p.conn.SetReadDeadline(time.Now().Add(d))
	for {
		n, err := p.conn.Read(buf)
		if err != nil {
			return
		}
		if buf[1] >= 192 && buf[1] <= 223 {
			if pkts, err := rtcp.Unmarshal(buf[:n]); err == nil {
				p.rtcps = append(p.rtcps, pkts...)
			}
			continue
		}
		p.pts[buf[1]&0x7f]++
	}
}

func (p *plainPeer) has(match func(rtcp.Packet) bool) bool {
	for _, r := range p.rtcps {
		if match(r) {
			return true
		}
	}
	return false
}

// TestPlainPeerBehindNAT: a plain peer whose SDP names an address nobody listens on is reached
// where its media comes from (latching, RTCP muxed as its SDP asks); its keyframe requests reach
// the browser and the browser's reach it as PLI and FIR; it gets sender reports; its RFC 4733
// digit is reported; its VP8 reaches the browser.
func TestPlainPeerBehindNAT(t *testing.T) {
	s := newBridge(t, testFactory(t), loopback, Options{})
	var (
		mu     sync.Mutex
		digits []string
	)
	s.OnDTMF(func(d string, _ time.Duration) {
		mu.Lock()
		digits = append(digits, d)
		mu.Unlock()
	})
	browser := bridgetest.NewBrowser(t, 440, true)
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
	audio, video := newPlainPeer(t, parsed.Media[0].Port), newPlainPeer(t, parsed.Media[1].Port)
	answer := "v=0\r\no=- 1 1 IN IP4 10.9.9.9\r\ns=-\r\nc=IN IP4 10.9.9.9\r\nt=0 0\r\n" +
		"m=audio 4000 RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\na=rtcp-mux\r\n" +
		"m=video 4002 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=rtcp-mux\r\n"
	jsep, err := s.FromPlain(ctx, answer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal(err)
	}
	browser.SetAnswer(jsep)
	browser.Send(ctx)
	// The peer speaks first: its media latches strata's destination.
	for i := range 50 {
		audio.send(0, false, uint32(i*160), make([]byte, 160))
		video.send(96, true, uint32(i*3000), []byte{0x10, 0x00, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00})
		time.Sleep(10 * time.Millisecond)
	}
	bridgetest.WaitFor(t, 5*time.Second, "the peer's video in the browser", func() bool { return browser.VideoFrames.Load() > 10 })
	for i := range 3 { // digit 5, 100 ms, its end three times
		audio.send(101, i == 0, 16000, []byte{5, 0x80 | 10, 0x03, 0x20})
	}
	video.sendRTCP(&rtcp.PictureLossIndication{SenderSSRC: 0xfeed, MediaSSRC: 1})
	s.RequestKeyframe()
	audio.read(2500 * time.Millisecond)
	video.read(300 * time.Millisecond)
	if audio.pts[0] < 50 {
		t.Errorf("the latched peer received %v", audio.pts)
	}
	if video.pts[96] < 5 {
		t.Errorf("the latched peer's video received %v", video.pts)
	}
	var sr *rtcp.SenderReport
	audio.has(func(p rtcp.Packet) bool { r, ok := p.(*rtcp.SenderReport); sr = r; return ok })
	if sr == nil || len(sr.Reports) != 1 || sr.Reports[0].SSRC != 0xfeed || sr.PacketCount == 0 {
		t.Fatalf("no sender report with a reception report of the peer's stream in %v", audio.rtcps)
	}
	// The peer reports on strata's stream: its loss and jitter are the "to peer" statistics.
	audio.sendRTCP(&rtcp.ReceiverReport{SSRC: 0xfeed, Reports: []rtcp.ReceptionReport{{SSRC: sr.SSRC, TotalLost: 3, Jitter: 80}}})
	bridgetest.WaitFor(t, 2*time.Second, "the peer's report in the stats", func() bool {
		st := s.Stats().Audio.ToPlain
		return st.Lost == 3 && st.Jitter == 10
	})
	for _, want := range []string{"*rtcp.PictureLossIndication", "*rtcp.FullIntraRequest"} {
		if !video.has(func(p rtcp.Packet) bool { return fmt.Sprintf("%T", p) == want }) {
			t.Errorf("no %s in %v", want, video.rtcps)
		}
	}
	bridgetest.WaitFor(t, 3*time.Second, "the peer's PLI at the browser", func() bool { return browser.PLIs.Load() > 0 })
	mu.Lock()
	if len(digits) != 1 || digits[0] != "5" {
		t.Errorf("digits %v", digits)
	}
	mu.Unlock()
	if st := s.Stats(); st.Peer != audio.conn.LocalAddr().String() || st.Audio.FromPlain.Lost != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestAudioOnlyPhoneRefusesVideo: the browser offers audio and video, the phone answers video
// with port 0; the call goes on with audio, the browser's video m-line is answered inactive (its
// transceiver stopped), and a re-offer keeps the refused m-line in its place.
func TestAudioOnlyPhoneRefusesVideo(t *testing.T) {
	s := newBridge(t, testFactory(t), loopback, Options{})
	browser := bridgetest.NewBrowser(t, 440, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offer, err := s.FromWebRTC(ctx, browser.Offer())
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := media.ParsePlainSDP(offer)
	phone := newPlainPeer(t, parsed.Media[0].Port)
	answer := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+
		"m=audio %d RTP/AVP 0\r\nm=video 0 RTP/AVP 96\r\n", phone.conn.LocalAddr().(*net.UDPAddr).Port)
	jsep, err := s.FromPlain(ctx, answer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal(err)
	}
	if _, video, _ := strings.Cut(jsep.SDP, "m=video"); !strings.Contains(video, "a=inactive") {
		t.Errorf("the browser's video is not stopped:\n%s", jsep.SDP)
	}
	browser.SetAnswer(jsep)
	browser.Send(ctx)
	phone.read(time.Second)
	if phone.pts[0] < 10 {
		t.Errorf("the phone received %v", phone.pts)
	}
	reoffer, err := s.Hold(SendOnly)
	if err != nil {
		t.Fatal(err)
	}
	again, err := media.ParsePlainSDP(reoffer)
	if err != nil || len(again.Media) != 2 || again.Media[1].Port != 0 || again.Media[0].Direction != "sendonly" {
		t.Fatalf("re-offer %v:\n%s", err, reoffer)
	}
}

// TestPlainOfferPicksItsFirstCarriedCodec: the browser is offered the plain peer's first format
// that the bridge carries, alone, and telephone-event at its rate (or at 8 kHz, with Opus).
func TestPlainOfferPicksItsFirstCarriedCodec(t *testing.T) {
	f := testFactory(t)
	for _, tc := range []struct{ media, want, not string }{
		{"m=audio 4000 RTP/AVP 18 9 0 101\r\na=rtpmap:18 G729/8000\r\na=rtpmap:101 telephone-event/8000\r\n", "G722/8000", "PCMU"},
		{"m=audio 4000 RTP/AVP 107 8\r\na=rtpmap:107 opus/48000/2\r\n", "opus/48000/2", "PCMA"},
		{"m=audio 4000 RTP/AVP 107 101\r\na=rtpmap:107 opus/48000/2\r\na=rtpmap:101 telephone-event/8000\r\n", "opus/48000/2", "telephone-event/48000"},
		{"m=video 4002 RTP/AVP 100 96\r\na=rtpmap:100 VP9/90000\r\na=rtpmap:96 VP8/90000\r\n", "VP9/90000", "VP8"},
		{"m=video 4002 RTP/AVP 97\r\na=rtpmap:97 H264/90000\r\na=fmtp:97 profile-level-id=42e01f;packetization-mode=1\r\n", "H264/90000", "VP8"},
	} {
		s := newBridge(t, f, loopback, Options{})
		jsep, err := s.FromPlain(context.Background(), "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+tc.media, webrtc.SDPTypeOffer)
		if err != nil {
			t.Fatal(tc.want, err)
		}
		if !strings.Contains(jsep.SDP, tc.want) || strings.Contains(jsep.SDP, tc.not) {
			t.Errorf("offer for %s:\n%s", tc.want, jsep.SDP)
		}
		if strings.Contains(tc.media, "telephone-event") && !strings.Contains(jsep.SDP, "telephone-event/8000") {
			t.Errorf("no telephone-event:\n%s", jsep.SDP)
		}
	}
}

// TestUnbridgedMLinesStayRefused: an m-line of the plain offer that the bridge does not take
// (real-time text here) is refused in the answer and in every re-offer, in its place.
func TestUnbridgedMLinesStayRefused(t *testing.T) {
	s := newBridge(t, testFactory(t), loopback, Options{})
	browser := bridgetest.NewBrowser(t, 440, false)
	offer := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
		"m=text 5000 RTP/AVP 98\r\na=rtpmap:98 t140/1000\r\nm=audio 4000 RTP/AVP 0\r\n"
	ctx := context.Background()
	jsep, err := s.FromPlain(ctx, offer, webrtc.SDPTypeOffer)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := s.FromWebRTC(ctx, browser.Answer(jsep))
	if err != nil {
		t.Fatal(err)
	}
	reoffer, err := s.Hold(SendOnly)
	if err != nil {
		t.Fatal(err)
	}
	for what, sdp := range map[string]string{"answer": answer, "re-offer": reoffer} {
		d, err := media.ParsePlainSDP(sdp)
		if err != nil || len(d.Media) != 2 || d.Media[0].Kind != "text" || d.Media[0].Port != 0 || d.Media[1].Port == 0 {
			t.Errorf("%s %v:\n%s", what, err, sdp)
		}
	}
}
