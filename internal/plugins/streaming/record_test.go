package streaming_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
)

// TestRecordingPlayable: `recording` of an rtp mountpoint fed by ffmpeg writes each stream's .mjr
// (named as asked) and, with recording.playable, a file of that stream beside it that ffmpeg
// decodes without an error: a .webm of the VP8 video and an .opus of the audio.
func TestRecordingPlayable(t *testing.T) {
	dir := t.TempDir()
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.Streaming.RecordingsDir = dir
		cfg.Recording.Playable = true
	})
	admin := attach(t, c)
	mp := createRTP(t, admin,
		map[string]any{"type": "audio", "mid": "a", "port": 0, "pt": 111, "codec": "opus"},
		map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"})
	args := append(testsrc("320x240"), videoArgs("vp8", "300k")...)
	args = append(args, rtpOut(mp.port(t, "v", "port"), 100)...)
	args = append(args, audioArgs()...)
	args = append(args, rtpOut(mp.port(t, "a", "port"), 111)...)
	ffmpeg(t, args...)
	time.Sleep(time.Second) // the feed is up
	start := map[string]any{"request": "recording", "action": "start", "id": mp.id,
		"media": []any{map[string]any{"mid": "v", "filename": "cam"}, map[string]any{"mid": "a", "filename": "mic"}}}
	if r, _ := request(t, admin, start, nil); r["streaming"] != "ok" {
		t.Fatalf("recording start: %v", r)
	}
	time.Sleep(3 * time.Second)
	stop := map[string]any{"request": "recording", "action": "stop", "id": mp.id, "audio": true, "video": true}
	if r, _ := request(t, admin, stop, nil); r["streaming"] != "ok" {
		t.Fatalf("recording stop: %v", r)
	}
	for _, f := range []string{"cam.mjr", "mic.mjr", "cam.webm", "mic.opus"} {
		path := filepath.Join(dir, f)
		if fi, err := os.Stat(path); err != nil || fi.Size() < 1000 {
			t.Fatalf("%s: %v (size %v)", f, err, fi)
		}
		if !strings.HasSuffix(f, ".mjr") {
			out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("ffmpeg decoding %s: %v %s", f, err, out)
			}
		}
	}
}
