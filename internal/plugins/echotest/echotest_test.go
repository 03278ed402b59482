package echotest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// call sets up an echotest call and starts the browser's media; stop it with the returned func.
func call(t *testing.T, h *testHandle, s plugin.Session, b *browser, body string) (answer *plugin.JSEP, stop func()) {
	t.Helper()
	ev := h.request(s, body, b.offer())
	if ev.data["result"] != "ok" || ev.data[short] != "event" {
		t.Fatalf("offer event %v", ev.data)
	}
	b.setAnswer(ev.jsep)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go b.media(done, &wg)
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return ev.jsep, stop
}

func TestEchoesAudioVideoAndData(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t)
	answer, _ := call(t, h, s, b, `{"audio":true,"video":true}`)

	// Like Janus: one codec per m-line, DTLS passive, candidates in the SDP.
	for _, want := range []string{"a=setup:passive", "a=end-of-candidates", "VP8/90000", "opus/48000/2", "webrtc-datachannel"} {
		if !strings.Contains(answer.SDP, want) {
			t.Errorf("answer lacks %q", want)
		}
	}
	for _, unwanted := range []string{"H264", "VP9", "AV1"} {
		if strings.Contains(answer.SDP, unwanted) {
			t.Errorf("answer offers more than one video codec: has %s", unwanted)
		}
	}

	video := b.collect(webrtc.RTPCodecTypeVideo, 40, 10*time.Second)
	video = b.continuous(webrtc.RTPCodecTypeVideo, "video", video)
	for _, p := range video {
		if len(p.Payload) < 8 || p.Payload[7] != 'a' {
			t.Fatalf("echoed video payload is not what was sent: % x", p.Payload[:8])
		}
	}
	b.continuous(webrtc.RTPCodecTypeAudio, "audio", b.collect(webrtc.RTPCodecTypeAudio, 40, 5*time.Second))

	<-b.dcOpen
	if err := b.dc.SendText("hello"); err != nil {
		t.Fatal(err)
	}
	if m := <-b.dcGot; !m.IsString || string(m.Data) != textPrefix+"hello" {
		t.Errorf("text echo %q", m.Data)
	}
	if err := b.dc.Send([]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if m := <-b.dcGot; m.IsString || !bytes.Equal(m.Data, []byte{1, 2, 3}) {
		t.Errorf("binary echo %v", m.Data)
	}

	q := s.Query().(map[string]any)
	if q["audio_codec"] != "opus" || q["video_codec"] != "vp8" || q["audio_active"] != true || q["video_active"] != true {
		t.Errorf("query %v", q)
	}
}

func TestAudioFalseStopsAudioEchoAndResumesContinuously(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t)
	call(t, h, s, b, `{"audio":true,"video":true}`)
	before := b.collect(webrtc.RTPCodecTypeAudio, 20, 10*time.Second)

	if ev := h.request(s, `{"audio":false}`, nil); ev.data["result"] != "ok" {
		t.Fatalf("audio:false answered %v", ev.data)
	}
	time.Sleep(200 * time.Millisecond)
	b.drain(webrtc.RTPCodecTypeAudio)
	b.drain(webrtc.RTPCodecTypeVideo)
	time.Sleep(500 * time.Millisecond)
	if n := len(b.echoed[webrtc.RTPCodecTypeAudio]); n > 0 {
		t.Errorf("%d audio packets echoed after audio:false", n)
	}
	if n := len(b.echoed[webrtc.RTPCodecTypeVideo]); n < 10 {
		t.Errorf("video stopped too: %d packets in 500 ms", n)
	}
	if q := s.Query().(map[string]any); q["audio_active"] != false {
		t.Errorf("query audio_active %v", q["audio_active"])
	}

	h.request(s, `{"audio":true}`, nil)
	b.drain(webrtc.RTPCodecTypeAudio)
	after := b.collect(webrtc.RTPCodecTypeAudio, 20, 5*time.Second)
	after = b.continuous(webrtc.RTPCodecTypeAudio, "audio after resume", after)
	if after[0].SSRC != before[0].SSRC {
		t.Errorf("audio SSRC changed across the pause")
	}
	// The pause leaves no hole: the stream continues right after the last packet before it.
	last := before[len(before)-1].SequenceNumber
	if gap := after[0].SequenceNumber - last; gap > 60 {
		t.Errorf("sequence gap of %d across the pause (pause was ~35 packets of input)", gap)
	}
}

func TestBitrateIsSentAsREMB(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t)
	call(t, h, s, b, `{"audio":true,"video":true}`)
	b.collect(webrtc.RTPCodecTypeVideo, 5, 10*time.Second)

	h.request(s, `{"bitrate":128000}`, nil)
	ssrc := uint32(b.vsender.GetParameters().Encodings[0].SSRC)
	rembs := 0
	deadline := time.After(5 * time.Second)
	for rembs < 2 { // the immediate one and a periodic one
		select {
		case p := <-b.feedback:
			r, ok := p.(*rtcp.ReceiverEstimatedMaximumBitrate)
			if !ok {
				continue
			}
			if r.Bitrate != 128000 || len(r.SSRCs) == 0 || r.SSRCs[0] != ssrc {
				t.Fatalf("REMB %v, want 128000 for SSRC %d", r, ssrc)
			}
			rembs++
		case <-deadline:
			t.Fatalf("%d REMB packets with the cap within 5 s", rembs)
		}
	}
	if q := s.Query().(map[string]any); q["bitrate"] != uint32(128000) {
		t.Errorf("query bitrate %v", q["bitrate"])
	}
}

func TestKeyframeRequestsAreForwarded(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t)
	call(t, h, s, b, `{"audio":true,"video":true}`)
	b.collect(webrtc.RTPCodecTypeVideo, 5, 10*time.Second)
	ssrc := uint32(b.vsender.GetParameters().Encodings[0].SSRC)

	// Re-enabling video asks the browser for a keyframe (PLI), as Janus does.
	h.request(s, `{"video":false}`, nil)
	h.request(s, `{"video":true}`, nil)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case p := <-b.feedback:
			if pli, ok := p.(*rtcp.PictureLossIndication); ok && pli.MediaSSRC == ssrc {
				return
			}
		case <-deadline:
			t.Fatal("no PLI for the browser's video after video:true")
		}
	}
}

func TestVideoCodecRestrictsTheAnswer(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t)
	ev := h.request(s, `{"audio":true,"video":true,"videocodec":"vp9"}`, b.offer())
	if ev.jsep == nil {
		t.Fatalf("no answer: %v", ev.data)
	}
	video := ev.jsep.SDP[strings.Index(ev.jsep.SDP, "m=video"):]
	if end := strings.Index(video, "m=application"); end > 0 {
		video = video[:end]
	}
	if !strings.Contains(video, "VP9/90000") || strings.Contains(video, "VP8/90000") || strings.Contains(video, "H264") {
		t.Errorf("video m-line is not VP9 only:\n%s", video)
	}
	if got := s.Query().(map[string]any)["video_codec"]; got != "vp9" {
		t.Errorf("query video_codec %v", got)
	}
}

func TestInvalidRequests(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	for _, tc := range []struct {
		body string
		jsep *plugin.JSEP
		code float64
		text string
	}{
		{"", nil, ErrNoMessage, "No message"},
		{"null", nil, ErrNoMessage, "No message"},
		{"[1,2]", nil, ErrInvalidJSON, "not an object"},
		{`{"audio":"yes"}`, nil, ErrInvalidElement, "audio should be a boolean"},
		{`{"bitrate":-5}`, nil, ErrInvalidElement, "bitrate should be a positive integer"},
		{`{"bitrate":1.5}`, nil, ErrInvalidElement, "bitrate should be a positive integer"},
		{`{"substream":3}`, nil, ErrInvalidElement, "substream should be 0, 1 or 2"},
		{`{"temporal_layer":9}`, nil, ErrInvalidElement, "temporal_layer should be 0, 1 or 2"},
		{`{"videocodec":5}`, nil, ErrInvalidElement, "videocodec should be a string"},
		{`{}`, nil, ErrInvalidElement, "no supported attributes"},
		{`{"unknown":1}`, nil, ErrInvalidElement, "no supported attributes"},
		{`{"audio":true}`, &plugin.JSEP{Type: "answer", SDP: "v=0\r\n"}, ErrInvalidSDP, "answer"},
		{`{"audio":true}`, &plugin.JSEP{Type: "offer", SDP: "not sdp"}, ErrInvalidSDP, "Error parsing offer"},
	} {
		ev := h.request(s, tc.body, tc.jsep)
		if ev.data[short] != "event" || ev.data["error_code"] != tc.code || !strings.Contains(ev.data["error"].(string), tc.text) {
			t.Errorf("%q: event %v, want error %v containing %q", tc.body, ev.data, tc.code, tc.text)
		}
		if ev.jsep != nil {
			t.Errorf("%q: error came with a JSEP", tc.body)
		}
	}
	// Settings without an offer are fine and answered with "ok".
	if ev := h.request(s, `{"record":true}`, nil); ev.data["result"] != "ok" {
		t.Errorf("record:true: %v", ev.data)
	}
	// As in Janus, nothing is recorded before there is media to record.
	if q := s.Query().(map[string]any); q["recording"] != nil {
		t.Errorf("query after record:true: %v", q)
	}
}

func TestHangupSendsDone(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t)
	call(t, h, s, b, `{"audio":true,"video":true,"bitrate":64000}`)
	b.collect(webrtc.RTPCodecTypeVideo, 5, 10*time.Second)

	h.ClosePeer("Close PC")
	if _, ok := h.nextEvent(func(e event) bool { return e.data["result"] == "done" }, 5*time.Second); !ok {
		t.Fatal(`no {"result":"done"} after the PeerConnection closed`)
	}
	if q := s.Query().(map[string]any); q["bitrate"] != uint32(0) || q["video_codec"] != nil {
		t.Errorf("controls not reset after hangup: %v", q)
	}
}

// TestSimulcastEchoIsOneContinuousStream: three layers come in; by default the highest is echoed;
// asking for substream 0 switches on the next keyframe of the lowest layer (after a PLI for it), and
// the echo stays one stream: one SSRC, no sequence gaps, continuous VP8 picture ids.
func TestSimulcastEchoIsOneContinuousStream(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowser(t, "h", "m", "l")
	call(t, h, s, b, `{"audio":true,"video":true}`)

	first := b.collect(webrtc.RTPCodecTypeVideo, 20, 10*time.Second)
	if tag := first[len(first)-1].Payload[7]; tag != 'a' {
		t.Fatalf("default echo is layer %q, want the highest (a)", tag)
	}
	if ev := h.request(s, `{"substream":0}`, nil); ev.data["result"] != "ok" {
		t.Fatalf("substream:0 answered %v", ev.data)
	}
	var pkts []*rtp.Packet
	deadline := time.After(10 * time.Second)
	for switched := false; !switched || len(pkts) < 40; {
		select {
		case p := <-b.echoed[webrtc.RTPCodecTypeVideo]:
			pkts = append(pkts, p)
			switched = switched || p.Payload[7] == 'c'
		case <-deadline:
			t.Fatalf("echo did not switch to the lowest layer (%d packets)", len(pkts))
		}
	}
	all := b.continuous(webrtc.RTPCodecTypeVideo, "simulcast echo", append(first, pkts...))
	for i := 1; i < len(all); i++ {
		prev, cur := vp8PictureID(all[i-1].Payload), vp8PictureID(all[i].Payload)
		if cur != (prev+1)&0x7fff {
			t.Fatalf("picture id jumps from %d to %d at packet %d", prev, cur, i)
		}
	}
	low := uint32(b.vsender.GetParameters().Encodings[2].SSRC)
	if !sawPLI(b.feedback, low) {
		t.Errorf("no PLI for the lowest layer (SSRC %d) before switching to it", low)
	}
	if _, ok := h.nextEvent(func(e event) bool { return e.data["substream"] == float64(0) }, 5*time.Second); !ok {
		t.Error("no substream event after the switch")
	}
	if q := s.Query().(map[string]any); q["substream"] != 0 || q["simulcast"] != true {
		t.Errorf("query after switch: %v", q)
	}
}

// sawPLI looks through the feedback received so far for a PLI about ssrc.
func sawPLI(feedback chan rtcp.Packet, ssrc uint32) bool {
	for {
		select {
		case p := <-feedback:
			if pli, ok := p.(*rtcp.PictureLossIndication); ok && pli.MediaSSRC == ssrc {
				return true
			}
		default:
			return false
		}
	}
}

func vp8PictureID(p []byte) uint16 { return uint16(p[2]&0x7f)<<8 | uint16(p[3]) }

// TestVP9SpatialLayerIsDropped: the browser sends three VP9 spatial layers per picture; asking for
// spatial_layer 0 echoes only layer 0, with the marker moved to its last packet.
func TestVP9SpatialLayerIsDropped(t *testing.T) {
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: t.TempDir()}, record.SessionOptions{}, testLogger()))
	b := newBrowserWith(t, webrtc.MimeTypeVP9)
	ev := h.request(s, `{"audio":true,"video":true,"videocodec":"vp9","spatial_layer":0}`, b.offer())
	b.setAnswer(ev.jsep)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		seq := uint16(0)
		for pic := 0; ; pic++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			for sid := range 3 {
				b0 := byte(0x20 | 0x08 | 0x04) // L, B, E: one packet per layer frame
				if pic%10 != 0 {
					b0 |= 0x40 // P: inter picture
				}
				payload := []byte{b0, byte(sid << 1), byte(pic), byte('0' + sid)}
				pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 98, SequenceNumber: seq, Timestamp: uint32(3000 * pic), Marker: sid == 2}, Payload: payload}
				seq++
				_ = b.video[0].WriteRTP(pkt)
			}
		}
	}()
	pkts := b.collect(webrtc.RTPCodecTypeVideo, 30, 10*time.Second)
	pkts = b.continuous(webrtc.RTPCodecTypeVideo, "vp9 echo", pkts)
	for _, p := range pkts {
		if p.Payload[3] != '0' {
			t.Fatalf("spatial layer %c echoed with spatial_layer 0", p.Payload[3])
		}
		if !p.Marker {
			t.Fatal("layer 0 packet, now the end of the picture, lacks the marker")
		}
	}
	if q := s.Query().(map[string]any); q["svc"] != true || q["spatial-layer"] != 0 {
		t.Errorf("query %v", q)
	}
}
