package voicemail_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/plugins/voicemail"
	"github.com/strata-rtc/strata/internal/record/rectest"
	"github.com/strata-rtc/strata/internal/server"
)

// caller is a client leaving a message: Opus (and a video m-line strata must reject).
type caller struct {
	h     *janusclient.Handle
	pc    *webrtc.PeerConnection
	audio *webrtc.TrackLocalStaticRTP
}

func startVoicemail(t *testing.T) (*server.Server, *janusclient.Client, string) {
	t.Helper()
	dir := t.TempDir()
	srv, c := janustest.Start(t, func(cfg *config.Config) {
		cfg.Plugins.VoiceMail.Path = dir
		cfg.Plugins.VoiceMail.Base = "/vm/"
	}, janustest.Logger())
	return srv, c, dir
}

func newCaller(t *testing.T, c *janusclient.Client) *caller {
	t.Helper()
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	cl := &caller{h: janustest.Attach(t, c, voicemail.Package), pc: pc}
	if cl.audio, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "caller"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(cl.audio); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv}); err != nil {
		t.Fatal(err)
	}
	return cl
}

// record sends record with the offer and applies the answer; strata receives Opus only.
func (cl *caller) record(t *testing.T) {
	t.Helper()
	offer, err := cl.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, answer := janustest.MustRequest(t, cl.h, map[string]any{"request": "record"}, janustest.CompleteLocal(t, cl.pc, offer))
	if data["voicemail"] != "event" || data["status"] != "starting" || answer == nil {
		t.Fatalf("record: %v %v", data, answer)
	}
	_, video, _ := strings.Cut(answer.SDP, "m=video")
	if !strings.Contains(answer.SDP, "opus/48000") || !strings.Contains(video, "a=inactive") {
		t.Fatalf("answer is not Opus only (video inactive):\n%s", answer.SDP)
	}
	if err := cl.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	janustest.WaitEvent(t, cl.h, 10*time.Second, func(d map[string]any) bool { return d["status"] == "started" })
}

// fetch gets a message over strata's HTTP listener and stores it in a file.
func fetch(t *testing.T, srv *server.Server, url string) string {
	t.Helper()
	resp, err := http.Get("http://" + srv.HTTPAddr() + url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "audio/ogg" {
		t.Fatalf("GET %s: %s %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	out := filepath.Join(t.TempDir(), "message.opus")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

var urlRE = regexp.MustCompile(`^/vm/janus-voicemail-\d+\.opus$`)

// A message reaches the 10 s limit: "done" gives the URL, strata serves a playable Ogg/Opus file of
// 10 s there, and closes the PeerConnection; the .mjr it recorded through is gone.
func TestMessageEndsAtTheLimitAndIsServed(t *testing.T) {
	t.Parallel()
	srv, c, dir := startVoicemail(t)
	cl := newCaller(t, c)
	cl.record(t)
	go rectest.Send(rectest.Media(t), cl.audio, nil, 11*time.Second)
	done := janustest.WaitEvent(t, cl.h, 15*time.Second, func(d map[string]any) bool { return d["status"] == "done" })
	url, _ := done["recording"].(string)
	if !urlRE.MatchString(url) {
		t.Fatalf("done: %v", done)
	}
	file := fetch(t, srv, url)
	p := rectest.ProbeFile(t, file)
	t.Logf("%s: %v, %.3f s", url, p.Codecs, p.Duration)
	if len(p.Codecs) != 1 || p.Codecs[0] != "opus" || p.Duration < 9.5 || p.Duration > 10.5 {
		t.Fatalf("message: %+v, want 10 s ± 0.5 s of opus", p)
	}
	rectest.Decodes(t, file)
	if left, _ := filepath.Glob(filepath.Join(dir, "*.mjr")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	waitHangup(t, cl.h)
}

func waitHangup(t *testing.T, h *janusclient.Handle) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-h.Events():
			if ev.Janus == "hangup" {
				return
			}
		case <-deadline:
			t.Fatal("no hangup after done")
		}
	}
}

// stop ends a message early; the API's errors are Janus's.
func TestStopAndErrors(t *testing.T) {
	t.Parallel()
	srv, c, _ := startVoicemail(t)
	cl := newCaller(t, c)
	for _, tc := range []struct {
		body map[string]any
		code int
	}{
		{map[string]any{}, voicemail.ErrMissingElement},
		{map[string]any{"request": 1}, voicemail.ErrInvalidElement},
		{map[string]any{"request": "play"}, voicemail.ErrInvalidRequest},
		{map[string]any{"request": "update"}, voicemail.ErrInvalidState},
	} {
		_, _, err := janustest.Request(t, cl.h, tc.body, nil)
		janustest.WantCode(t, err, tc.code)
	}
	cl.record(t)
	_, _, err := janustest.Request(t, cl.h, map[string]any{"request": "record"}, nil)
	janustest.WantCode(t, err, voicemail.ErrAlreadyRecording)
	rectest.Send(rectest.Media(t), cl.audio, nil, 3*time.Second)
	done, _ := janustest.MustRequest(t, cl.h, map[string]any{"request": "stop"}, nil)
	url, _ := done["recording"].(string)
	if done["status"] != "done" || !urlRE.MatchString(url) {
		t.Fatalf("stop: %v", done)
	}
	p := rectest.ProbeFile(t, fetch(t, srv, url))
	if p.Duration < 2.5 || p.Duration > 3.5 {
		t.Fatalf("a 3 s message lasts %.3f s", p.Duration)
	}
	// Only the messages' own names are served.
	for _, path := range []string{"/vm/", "/vm/x.mjr", "/vm/../janus", "/vm/janus-voicemail-1.opus/x", "/vm/%2e%2e/etc/passwd"} {
		resp, err := http.Get("http://" + srv.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
}
