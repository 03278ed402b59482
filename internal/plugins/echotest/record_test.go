package echotest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/record/rectest"
)

// waitConnected waits until the test browser's PeerConnection is up, so that what it sends from
// then on reaches strata.
func (b *browser) waitConnected(d time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(d)
	for b.pc.ConnectionState() != webrtc.PeerConnectionStateConnected {
		if time.Now().After(deadline) {
			b.t.Fatalf("PeerConnection %s after %v", b.pc.ConnectionState(), d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A 10 s echo of real VP8 and Opus, recorded with record/filename, is two .mjr files that
// janus-pp-rec turns into a .webm and an .opus of 10 s (± 0.5 s) which ffmpeg decodes cleanly
// (and strata's converter into one .webm of both);
// handle_info names them while they are written, as Janus's does. With recording.playable the
// echo is also one .webm of both tracks, 10 s long, that ffmpeg decodes cleanly.
func TestRecordingAnEchoMakesPlayableFiles(t *testing.T) {
	m := rectest.Media(t)
	dir := t.TempDir()
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: dir}, record.SessionOptions{Playable: true}, testLogger()))
	b := newBrowser(t)
	ev := h.request(s, `{"audio":true,"video":true,"record":true,"filename":"calls/echo"}`, b.offer())
	if ev.data["result"] != "ok" {
		t.Fatalf("record with the offer: %v", ev.data)
	}
	b.setAnswer(ev.jsep)
	b.waitConnected(10 * time.Second)
	rec, _ := s.Query().(map[string]any)["recording"].(map[string]any)
	if rec["audio"] != "echo-audio.mjr" || rec["video"] != "echo-video.mjr" {
		t.Fatalf("handle_info recording %v", rec)
	}
	sent := rectest.Send(m, b.audio, b.video[0], 10*time.Second)
	if ev := h.request(s, `{"record":false}`, nil); ev.data["result"] != "ok" {
		t.Fatalf("record:false: %v", ev.data)
	}
	if q := s.Query().(map[string]any); q["recording"] != nil {
		t.Fatalf("still recording after record:false: %v", q["recording"])
	}
	t.Logf("sent %+v", sent)
	out := t.TempDir()
	rectest.Converted(t, filepath.Join(dir, "calls", "echo-audio.mjr"), filepath.Join(out, "echo.opus"), "opus", 10*time.Second)
	rectest.Converted(t, filepath.Join(dir, "calls", "echo-video.mjr"), filepath.Join(out, "echo.webm"), "vp8", 10*time.Second)
	rectest.ConvertedByStrata(t, filepath.Join(out, "both.webm"), 10*time.Second,
		filepath.Join(dir, "calls", "echo-audio.mjr"), filepath.Join(dir, "calls", "echo-video.mjr"))
	t.Run("playable", func(t *testing.T) { rectest.Playable(t, filepath.Join(dir, "calls", "echo.webm"), 10*time.Second) })
}

// Without a filename the files are named as Janus names them; a hangup ends them; a filename
// outside the recordings directory is refused.
func TestRecordingNamesAndHangup(t *testing.T) {
	dir := t.TempDir()
	h := newTestHandle(t)
	s := h.attach(New(config.EchoTest{RecordingsDir: dir}, record.SessionOptions{}, testLogger()))
	for _, bad := range []string{"../escape", "/etc/echo"} {
		ev := h.request(s, `{"record":true,"filename":"`+bad+`"}`, nil)
		if ev.data["error_code"] != float64(ErrInvalidElement) || !strings.Contains(ev.data["error"].(string), "outside") {
			t.Fatalf("filename %q: %v", bad, ev.data)
		}
	}
	b := newBrowser(t)
	call(t, h, s, b, `{"audio":true,"video":true,"record":true}`)
	b.collect(webrtc.RTPCodecTypeVideo, 25, 10*time.Second)
	rec, _ := s.Query().(map[string]any)["recording"].(map[string]any)
	audio, _ := rec["audio"].(string)
	if !strings.HasPrefix(audio, "echotest-2-") || !strings.HasSuffix(audio, "-audio.mjr") ||
		rec["video"] != strings.TrimSuffix(audio, "-audio.mjr")+"-video.mjr" {
		t.Fatalf("handle_info recording %v", rec)
	}
	h.ClosePeer("Close PC")
	if _, ok := h.nextEvent(func(e event) bool { return e.data["result"] == "done" }, 5*time.Second); !ok {
		t.Fatal("no done after the hangup")
	}
	if q := s.Query().(map[string]any); q["recording"] != nil {
		t.Fatalf("still recording after the hangup: %v", q["recording"])
	}
	for _, name := range []string{audio, rec["video"].(string)} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v, %v", name, st, err)
		}
	}
}
