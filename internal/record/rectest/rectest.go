// Package rectest helps the plugins' recording tests: real media to send (the load generator's
// VP8 and Opus clips, paced in real time) and the checks a recording has to pass with Janus's and
// Debian's own tools: janus-pp-rec converts it, ffprobe reads its length and streams, ffmpeg
// decodes it without an error.
package rectest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/record/convert"
)

// Tool runs a program the tests check recordings with and returns its output (stdout and stderr).
func Tool(t testing.TB, name string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed (scripts/install-deps.sh test installs it): %v", name, err)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// Media loads the smallest VP8 clip (320x180, 30 fps) and the Opus clip, generated with ffmpeg
// on first use.
func Media(t testing.TB) *mediasrc.Media {
	t.Helper()
	low := mediasrc.Layers[len(mediasrc.Layers)-1]
	m, err := mediasrc.Load(mediasrc.DefaultDir(), []mediasrc.Layer{low})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Send paces m's media in real time for d: audio to audio, video (if not nil) to video. It
// returns what it sent.
func Send(m *mediasrc.Media, audio, video mediasrc.Writer, d time.Duration) mediasrc.PacerStats {
	return SendUntil(m, audio, video, time.After(d))
}

// SendUntil is Send until stop is closed (or receives).
func SendUntil(m *mediasrc.Media, audio, video mediasrc.Writer, stop <-chan time.Time) mediasrc.PacerStats {
	var vw []mediasrc.Writer
	mm := *m
	if video != nil {
		vw = []mediasrc.Writer{video}
	} else {
		mm.Video = nil
	}
	start := time.Now()
	p := mediasrc.NewPacer(&mm, audio, vw, 0)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return p.Stats()
		case <-t.C:
		}
		next := p.Step(time.Since(start))
		t.Reset(max(next-time.Since(start), 0))
	}
}

// Probe is what ffprobe says of a media file.
type Probe struct {
	Duration float64  // seconds
	Codecs   []string // one per stream
}

// ProbeFile runs ffprobe on path.
func ProbeFile(t testing.TB, path string) Probe {
	t.Helper()
	out := Tool(t, "ffprobe", "-v", "error", "-show_entries", "stream=codec_name:format=duration",
		"-of", "default=noprint_wrappers=1", path)
	var p Probe
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "codec_name":
			p.Codecs = append(p.Codecs, v)
		case "duration":
			if _, err := fmt.Sscanf(v, "%g", &p.Duration); err != nil {
				t.Fatalf("ffprobe %s: duration %q", path, v)
			}
		}
	}
	return p
}

// Decodes fails the test if ffmpeg reports an error decoding path.
func Decodes(t testing.TB, path string) {
	t.Helper()
	if errs := Tool(t, "ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"); errs != "" {
		t.Fatalf("ffmpeg decoding %s: %s", filepath.Base(path), errs)
	}
}

// Converted turns a .mjr recording into out with janus-pp-rec (the format from out's extension)
// and checks the result: ffprobe finds one stream of codec lasting want (within 0.5 s), and ffmpeg
// decodes it cleanly.
func Converted(t testing.TB, mjr, out, codec string, want time.Duration) Probe {
	t.Helper()
	log := Tool(t, "janus-pp-rec", mjr, out)
	p := ProbeFile(t, out)
	t.Logf("%s -> %s: %s, %.3f s", filepath.Base(mjr), filepath.Base(out), p.Codecs, p.Duration)
	if len(p.Codecs) != 1 || p.Codecs[0] != codec {
		t.Fatalf("%s has streams %v, want one %s; janus-pp-rec said:\n%s", out, p.Codecs, codec, log)
	}
	if d := p.Duration - want.Seconds(); d > 0.5 || d < -0.5 {
		t.Fatalf("%s lasts %.3f s, want %v ± 0.5 s", out, p.Duration, want)
	}
	Decodes(t, out)
	return p
}

// Playable checks a participant's playable recording: one VP8 and one Opus stream, lasting want
// (within 0.5 s), that ffmpeg decodes cleanly.
func Playable(t testing.TB, path string, want time.Duration) {
	t.Helper()
	p := ProbeFile(t, path)
	t.Logf("%s: %v, %.3f s", filepath.Base(path), p.Codecs, p.Duration)
	codecs := append([]string(nil), p.Codecs...)
	sort.Strings(codecs)
	if d := p.Duration - want.Seconds(); strings.Join(codecs, ",") != "opus,vp8" || d > 0.5 || d < -0.5 {
		t.Fatalf("%s has streams %v and lasts %.3f s, want VP8 and Opus for %v ± 0.5 s", path, p.Codecs, p.Duration, want)
	}
	Decodes(t, path)
}

// ConvertedByStrata turns a participant's .mjr recordings into out with strata's own converter
// (`strata rec convert`'s code) and checks the result as Playable does.
func ConvertedByStrata(t testing.TB, out string, want time.Duration, mjrs ...string) {
	t.Helper()
	st, err := convert.File(out, mjrs...)
	if err != nil {
		t.Fatalf("converting %v: %v", mjrs, err)
	}
	t.Logf("%s", st.Summary(out))
	Playable(t, out, want)
}
