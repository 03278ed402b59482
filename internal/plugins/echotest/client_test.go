package echotest

import (
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
)

// browser is a Pion PeerConnection playing the browser side of an echotest.
type browser struct {
	t        *testing.T
	pc       *webrtc.PeerConnection
	audio    *webrtc.TrackLocalStaticRTP
	video    []*webrtc.TrackLocalStaticRTP // one per simulcast layer, highest first
	vsender  *webrtc.RTPSender
	dc       *webrtc.DataChannel
	dcOpen   chan struct{}
	dcGot    chan webrtc.DataChannelMessage
	echoed   map[webrtc.RTPCodecType]chan *rtp.Packet
	feedback chan rtcp.Packet
}

func newBrowser(t *testing.T, rids ...string) *browser {
	t.Helper()
	return newBrowserWith(t, webrtc.MimeTypeVP8, rids...)
}

// newBrowserWith sends video with the given codec (one track per rid, or one without rids).
func newBrowserWith(t *testing.T, videoMime string, rids ...string) *browser {
	t.Helper()
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	b := &browser{
		t: t, pc: pc, dcOpen: make(chan struct{}), dcGot: make(chan webrtc.DataChannelMessage, 16),
		echoed: map[webrtc.RTPCodecType]chan *rtp.Packet{
			webrtc.RTPCodecTypeAudio: make(chan *rtp.Packet, 4096), webrtc.RTPCodecTypeVideo: make(chan *rtp.Packet, 4096),
		},
		feedback: make(chan rtcp.Packet, 1024),
	}
	b.addTracks(videoMime, rids)
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		ch := b.echoed[tr.Kind()]
		for {
			p, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			select {
			case ch <- p:
			default:
			}
		}
	})
	return b
}

func (b *browser) addTracks(videoMime string, rids []string) {
	t := b.t
	var err error
	b.audio, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "browser")
	if err != nil {
		t.Fatal(err)
	}
	as, err := b.pc.AddTrack(b.audio)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, _, err := as.ReadRTCP(); err != nil {
				return
			}
		}
	}()
	vp8 := webrtc.RTPCodecCapability{MimeType: videoMime, ClockRate: 90000}
	if len(rids) == 0 {
		tr, err := webrtc.NewTrackLocalStaticRTP(vp8, "video", "browser")
		if err != nil {
			t.Fatal(err)
		}
		b.video = append(b.video, tr)
	}
	for _, rid := range rids {
		tr, err := webrtc.NewTrackLocalStaticRTP(vp8, "video", "browser", webrtc.WithRTPStreamID(rid))
		if err != nil {
			t.Fatal(err)
		}
		b.video = append(b.video, tr)
	}
	if b.vsender, err = b.pc.AddTrack(b.video[0]); err != nil {
		t.Fatal(err)
	}
	for _, extra := range b.video[1:] {
		if err := b.vsender.AddEncoding(extra); err != nil {
			t.Fatal(err)
		}
	}
	// Feedback about each simulcast layer arrives on that layer's encoding.
	for _, tr := range b.video {
		read := b.vsender.ReadRTCP
		if rid := tr.RID(); rid != "" {
			read = func() ([]rtcp.Packet, interceptor.Attributes, error) { return b.vsender.ReadSimulcastRTCP(rid) }
		}
		go b.readFeedback(read)
	}
	if b.dc, err = b.pc.CreateDataChannel("echo", nil); err != nil {
		t.Fatal(err)
	}
	b.dc.OnOpen(func() { close(b.dcOpen) })
	b.dc.OnMessage(func(m webrtc.DataChannelMessage) { b.dcGot <- m })
}

func (b *browser) readFeedback(read func() ([]rtcp.Packet, interceptor.Attributes, error)) {
	for {
		pkts, _, err := read()
		if err != nil {
			return
		}
		for _, p := range pkts {
			select {
			case b.feedback <- p:
			default:
			}
		}
	}
}

// offer gathers all candidates (half trickle) and returns the JSEP the page would send.
func (b *browser) offer() *plugin.JSEP {
	b.t.Helper()
	o, err := b.pc.CreateOffer(nil)
	if err != nil {
		b.t.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(b.pc)
	if err := b.pc.SetLocalDescription(o); err != nil {
		b.t.Fatal(err)
	}
	<-done
	return &plugin.JSEP{Type: "offer", SDP: b.pc.LocalDescription().SDP}
}

func (b *browser) setAnswer(j *plugin.JSEP) {
	b.t.Helper()
	if j == nil || j.Type != "answer" {
		b.t.Fatalf("no answer JSEP: %+v", j)
	}
	answer := j.SDP
	if len(b.video) > 1 {
		// Pion (unlike browsers) reads the answer's "a=rid:x recv" as rids it will receive and then
		// wants a rid on the echo, which strata rightly strips; so the test browser drops those lines.
		var kept []string
		for line := range strings.Lines(answer) {
			if !strings.HasPrefix(line, "a=rid:") && !strings.HasPrefix(line, "a=simulcast:") {
				kept = append(kept, line)
			}
		}
		answer = strings.Join(kept, "")
	}
	if err := b.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		b.t.Fatal(err)
	}
}

// vp8Payload builds a VP8 payload: descriptor with a 15-bit picture id and TL0PICIDX/TID, then a
// payload header whose P bit says keyframe or not, then a tag byte identifying the sender's layer.
func vp8Payload(picID uint16, tl0 uint8, tid uint8, keyframe bool, tag byte) []byte {
	p := make([]byte, 120)
	p[0] = 0x90 // X, S, PID 0
	p[1] = 0xe0 // I, L, T
	p[2], p[3] = 0x80|byte(picID>>8), byte(picID)
	p[4] = tl0
	p[5] = tid<<6 | 0x20 // TID, Y
	p[6] = 0x01          // inter frame
	if keyframe {
		p[6] = 0x00
	}
	p[7] = tag
	return p
}

// media sends VP8 on every video track (a keyframe every 10 frames) and Opus, until stop closes.
func (b *browser) media(stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	opus := make([]byte, 60)
	midID, ridID, mid := b.simulcastExtensions()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for layer, tr := range b.video {
			pkt := &rtp.Packet{
				Header:  rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: uint16(1000*layer + i), Timestamp: uint32(3000 * i), Marker: true},
				Payload: vp8Payload(uint16(100*layer+i)&0x7fff, uint8(i), 0, i%10 == 0, byte('a'+layer)),
			}
			if len(b.video) > 1 { // a browser marks simulcast packets with mid and rid; Pion does not
				_ = pkt.SetExtension(midID, []byte(mid))
				_ = pkt.SetExtension(ridID, []byte(tr.RID()))
			}
			_ = tr.WriteRTP(pkt)
		}
		_ = b.audio.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(i), Timestamp: uint32(960 * i)}, Payload: opus})
	}
}

// simulcastExtensions returns the negotiated mid and rid extension ids and the video mid.
func (b *browser) simulcastExtensions() (midID, ridID uint8, mid string) {
	for _, e := range b.vsender.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.SDESMidURI:
			midID = uint8(e.ID)
		case sdp.SDESRTPStreamIDURI:
			ridID = uint8(e.ID)
		}
	}
	for _, t := range b.pc.GetTransceivers() {
		if t.Sender() == b.vsender {
			mid = t.Mid()
		}
	}
	return midID, ridID, mid
}

// collect reads n echoed packets of a kind.
func (b *browser) collect(kind webrtc.RTPCodecType, n int, d time.Duration) []*rtp.Packet {
	b.t.Helper()
	var out []*rtp.Packet
	deadline := time.After(d)
	for len(out) < n {
		select {
		case p := <-b.echoed[kind]:
			out = append(out, p)
		case <-deadline:
			b.t.Fatalf("%d of %d echoed %s packets within %v", len(out), n, kind, d)
		}
	}
	return out
}

func (b *browser) drain(kind webrtc.RTPCodecType) {
	for {
		select {
		case <-b.echoed[kind]:
		default:
			return
		}
	}
}

// continuous checks that pkts, echoed packets of a kind, are one stream: one SSRC, sequence
// numbers without a hole, timestamps never going back; it returns them in sequence order. A packet
// the host drops on the loopback under load is repaired by retransmission (RTX, which Pion hands to
// the track's reader) after later ones: a hole waits up to a second for its repair, so what is
// checked is the echo's numbering, not the machine's load.
func (b *browser) continuous(kind webrtc.RTPCodecType, what string, pkts []*rtp.Packet) []*rtp.Packet {
	b.t.Helper()
	for i := 1; i < len(pkts); i++ {
		if pkts[i].SSRC != pkts[0].SSRC {
			b.t.Fatalf("%s: SSRC changed from %d to %d", what, pkts[0].SSRC, pkts[i].SSRC)
		}
	}
	first := pkts[0].SequenceNumber
	offset := func(p *rtp.Packet) int { return int(int16(p.SequenceNumber - first)) }
	bySeq := map[int]*rtp.Packet{}
	lo, hi := 0, 0
	for _, p := range pkts {
		n := offset(p)
		bySeq[n] = p
		lo, hi = min(lo, n), max(hi, n)
	}
	deadline := time.After(time.Second)
	for len(bySeq) < hi-lo+1 {
		select {
		case p := <-b.echoed[kind]:
			if n := offset(p); p.SSRC == pkts[0].SSRC && n >= lo && n <= hi {
				bySeq[n] = p
			}
		case <-deadline:
			for n := lo; n <= hi; n++ {
				if bySeq[n] == nil {
					b.t.Fatalf("%s: sequence number %d never arrived (%d of the %d from %d to %d)", what,
						first+uint16(n), len(bySeq), hi-lo+1, first+uint16(lo), first+uint16(hi))
				}
			}
		}
	}
	out := make([]*rtp.Packet, 0, len(bySeq))
	for n := lo; n <= hi; n++ {
		out = append(out, bySeq[n])
	}
	for i := 1; i < len(out); i++ {
		if int32(out[i].Timestamp-out[i-1].Timestamp) < 0 {
			b.t.Fatalf("%s: timestamp goes back from %d to %d", what, out[i-1].Timestamp, out[i].Timestamp)
		}
	}
	return out
}
