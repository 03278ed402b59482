package recordplay_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/ivfwriter"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/plugins/recordplay"
	"github.com/strata-rtc/strata/internal/sfu"
)

// startServer runs strata with its recordings in dir (and edits applied) and returns a handle of
// the plugin.
func startServer(t *testing.T, dir string, edits ...func(*config.Config)) (*janusclient.Client, *janusclient.Handle) {
	t.Helper()
	c := janustest.StartServer(t, func(cfg *config.Config) {
		cfg.Plugins.RecordPlay.Path = dir
		for _, e := range edits {
			e(cfg)
		}
	}, janustest.Logger())
	return c, janustest.Attach(t, c, recordplay.Package)
}

// copySample puts Janus's sample recording (id 1234) into dir.
func copySample(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"1234.nfo", "rec-sample-audio.mjr", "rec-sample-video.mjr"} {
		b, err := os.ReadFile(filepath.Join("/usr/share/janus/recordings", name))
		if err != nil {
			t.Fatalf("Janus's sample recording (Debian's janus package): %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sender is a client that records: Opus and VP8 (320x180) encoded by ffmpeg, sent in real time.
type sender struct {
	pc           *webrtc.PeerConnection
	audio, video *webrtc.TrackLocalStaticRTP
	media        *mediasrc.Media
	pacer        *mediasrc.Pacer // one stream across calls of send, as a browser's
}

// newSender makes a sender on api (nil: on the loopback interface, where the test's strata is).
func newSender(t *testing.T, api *webrtc.API) *sender {
	t.Helper()
	if api == nil {
		api = peertest.BrowserAPI(t)
	}
	m, err := mediasrc.Load(mediasrc.DefaultDir(), []mediasrc.Layer{mediasrc.Layers[2]})
	if err != nil {
		t.Fatalf("test media (ffmpeg): %v", err)
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	s := &sender{pc: pc, media: m}
	s.audio, _ = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "rec")
	s.video, _ = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "video", "rec")
	for _, tr := range []webrtc.TrackLocal{s.audio, s.video} {
		if _, err := pc.AddTransceiverFromTrack(tr, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// offer is the sender's complete offer.
func (s *sender) offer(t *testing.T) *janusclient.JSEP {
	t.Helper()
	o, err := s.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	return janustest.CompleteLocal(t, s.pc, o)
}

func (s *sender) answer(t *testing.T, j *janusclient.JSEP) {
	t.Helper()
	if j == nil || j.Type != "answer" {
		t.Fatalf("want an answer, got %+v", j)
	}
	if err := s.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: j.SDP}); err != nil {
		t.Fatal(err)
	}
}

// send sends the media in real time for d once the connection is up; a later call goes on with the
// same stream.
func (s *sender) send(t *testing.T, d time.Duration) {
	t.Helper()
	up := make(chan struct{})
	var once sync.Once
	s.pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateConnected {
			once.Do(func() { close(up) })
		}
	})
	if s.pc.ConnectionState() == webrtc.PeerConnectionStateConnected {
		once.Do(func() { close(up) })
	}
	select {
	case <-up:
	case <-time.After(10 * time.Second):
		t.Fatal("the sender did not connect")
	}
	start := sfu.Now()
	if s.pacer == nil {
		s.pacer = mediasrc.NewPacer(s.media, s.audio, []mediasrc.Writer{s.video}, start)
	}
	for now := start; now-start < d; now = sfu.Now() {
		next := s.pacer.Step(now)
		time.Sleep(max(next-sfu.Now(), time.Millisecond))
	}
}

// recordMedia records d of media under id (sent from api, nil: loopback) and stops; it returns when the recording is listed.
func recordMedia(t *testing.T, api *webrtc.API, h *janusclient.Handle, id uint64, name string, d time.Duration) {
	t.Helper()
	s := newSender(t, api)
	data, j := janustest.MustRequest(t, h, map[string]any{"request": "record", "id": id, "name": name}, s.offer(t))
	if r, _ := data["result"].(map[string]any); r["status"] != "recording" || r["id"] != float64(id) {
		t.Fatalf("record: %v", data)
	}
	s.answer(t, j)
	s.send(t, d)
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "stop"}, nil)
	if r, _ := data["result"].(map[string]any); r["status"] != "stopped" || r["id"] != float64(id) {
		t.Fatalf("stop: %v", data)
	}
	janustest.WaitEvent(t, h, 5*time.Second, func(d map[string]any) bool { return d["result"] == "done" })
}

// viewer is a client that plays a recording: the video written to an IVF file, audio counted.
type viewer struct {
	pc          *webrtc.PeerConnection
	ivf         string
	mu          sync.Mutex
	ivfw        *ivfwriter.IVFWriter
	audio, vids atomic.Int64
	tracks      atomic.Int32
}

// newViewer makes a viewer on api (nil: on the loopback interface).
func newViewer(t *testing.T, api *webrtc.API) *viewer {
	t.Helper()
	if api == nil {
		api = peertest.BrowserAPI(t)
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	v := &viewer{pc: pc, ivf: filepath.Join(t.TempDir(), "played.ivf")}
	w, err := ivfwriter.New(v.ivf)
	if err != nil {
		t.Fatal(err)
	}
	v.ivfw = w
	t.Cleanup(func() { v.closeIVF() })
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		v.tracks.Add(1)
		for {
			p, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			if tr.Kind() == webrtc.RTPCodecTypeAudio {
				v.audio.Add(1)
				continue
			}
			v.vids.Add(1)
			v.mu.Lock()
			if v.ivfw != nil {
				_ = v.ivfw.WriteRTP(p)
			}
			v.mu.Unlock()
		}
	})
	return v
}

func (v *viewer) closeIVF() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ivfw != nil {
		_ = v.ivfw.Close()
		v.ivfw = nil
	}
}

// answer answers strata's offer.
func (v *viewer) answer(t *testing.T, offer *janusclient.JSEP) *janusclient.JSEP {
	t.Helper()
	if offer == nil || offer.Type != "offer" {
		t.Fatalf("want an offer, got %+v", offer)
	}
	if err := v.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	a, err := v.pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	return janustest.CompleteLocal(t, v.pc, a)
}

// play asks for recording id and starts it; it returns the play result.
func play(t *testing.T, h *janusclient.Handle, v *viewer, id uint64) map[string]any {
	t.Helper()
	data, offer := janustest.MustRequest(t, h, map[string]any{"request": "play", "id": id}, nil)
	r, _ := data["result"].(map[string]any)
	if r["status"] != "preparing" || r["id"] != float64(id) {
		t.Fatalf("play: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "start"}, v.answer(t, offer))
	if s, _ := data["result"].(map[string]any); s["status"] != "playing" {
		t.Fatalf("start: %v", data)
	}
	return r
}

// decodedFrames decodes an IVF file with ffmpeg and returns the frames it decoded; any decoding
// error fails the test.
func decodedFrames(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-v", "error", "-stats", "-i", path, "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`frame=\s*(\d+)`).FindAllSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("ffmpeg printed no frame count:\n%s", out)
	}
	if errs := regexp.MustCompile(`(?m)^\[.*\] .*(error|Error|corrupt).*$`).Find(out); errs != nil {
		t.Errorf("decoding errors: %s", errs)
	}
	n, _ := strconv.Atoi(string(m[len(m)-1][1]))
	return n
}

// request sends a request and returns its plugin data or its error code.
func request(t *testing.T, h *janusclient.Handle, body map[string]any, jsep *janusclient.JSEP) (map[string]any, int) {
	t.Helper()
	data, _, err := janustest.Request(t, h, body, jsep)
	if err != nil {
		return nil, janusclient.Code(err)
	}
	return data, 0
}
