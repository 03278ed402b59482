package recordplay_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/recordplay"
)

// A client records 6 s of VP8 and Opus; the recording is listed with Janus's fields, its files
// and .nfo are named and written as Janus writes them, and a viewer that plays it back decodes the
// video it receives.
func TestRecordAndPlayBack(t *testing.T) {
	dir := t.TempDir()
	c, h := startServer(t, dir)
	const id = 4242
	recordMedia(t, nil, h, id, "my; recording", 6*time.Second)

	nfo, err := os.ReadFile(filepath.Join(dir, "4242.nfo"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(nfo), "\r\n")
	if len(lines) != 6 || lines[0] != "[4242]" || lines[1] != `name = my\; recording` || !strings.HasPrefix(lines[2], "date = 20") ||
		lines[3] != "audio = rec-4242-audio.mjr" || lines[4] != "video = rec-4242-video.mjr" || lines[5] != "" {
		t.Errorf(".nfo:\n%q", nfo)
	}
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "list"}, nil)
	list, _ := data["list"].([]any)
	if data["recordplay"] != "list" || len(list) != 1 {
		t.Fatalf("list: %v", data)
	}
	e := list[0].(map[string]any)
	if e["id"] != float64(id) || e["name"] != "my; recording" || e["audio"] != true || e["video"] != true || e["data"] != false ||
		e["audio_codec"] != "opus" || e["video_codec"] != "vp8" {
		t.Errorf("listed as %v", e)
	}

	v := newViewer(t, nil)
	play(t, janustest.Attach(t, c, recordplay.Package), v, id)
	deadline := time.After(20 * time.Second)
	for v.vids.Load() == 0 || v.audio.Load() < 250 {
		select {
		case <-deadline:
			t.Fatalf("received %d audio and %d video packets", v.audio.Load(), v.vids.Load())
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(time.Second) // the rest of the video
	v.closeIVF()
	// 6 s at 30 frames a second were recorded; a loopback loses nothing.
	n := decodedFrames(t, v.ivf)
	t.Logf("played back: %d video frames decoded, %d audio packets", n, v.audio.Load())
	if n < 150 {
		t.Errorf("decoded %d frames of the playback, want about 180", n)
	}
	if a := v.audio.Load(); a < 280 || a > 310 {
		t.Errorf("received %d audio packets, want about 300", a)
	}
}
