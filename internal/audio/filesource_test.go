package audio

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tool runs ffmpeg or ffprobe (scripts/install-deps.sh test installs them) and returns its output.
func tool(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is needed (scripts/install-deps.sh test): %v", name, err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(name, append([]string{"-hide_banner", "-loglevel", "error"}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// Tones for the files: one per channel, so the tests can tell left from right.
const (
	toneL   = "0.5*sin(2*PI*440*t)"
	toneR   = "0.5*sin(2*PI*660*t)"
	toneAmp = 0.5
)

// opusFile encodes seconds of the per-channel expressions (aevalsrc syntax) into an Ogg/Opus file
// with ffmpeg's libopus encoder, whose Ogg pages last up to a second.
func opusFile(t testing.TB, seconds string, channels ...string) string {
	t.Helper()
	return opusFileArgs(t, seconds, nil, channels...)
}

func opusFileArgs(t testing.TB, seconds string, args []string, channels ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "announcement.opus")
	src := "aevalsrc=" + strings.Join(channels, "|") + ":s=48000:d=" + seconds
	args = append([]string{"-f", "lavfi", "-i", src, "-c:a", "libopus", "-b:a", "96k"}, args...)
	tool(t, "ffmpeg", append(args, path)...)
	return path
}

// drain plays s to its end as a mixer would, polling when no frame is ready, and returns copies of
// the frames and how many polls found none.
func drain(t *testing.T, s *FileSource, limit int) (frames [][]int16, misses uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !s.Done() && len(frames) < limit {
		if pcm, ok := s.Next(); ok {
			frames = append(frames, append([]int16(nil), pcm...))
			continue
		}
		if !s.Done() {
			misses++
		}
		if time.Now().After(deadline) {
			t.Fatalf("stuck after %d frames", len(frames))
		}
		time.Sleep(time.Millisecond)
	}
	return frames, misses
}

func open(t *testing.T, path string, f Format, loop bool) *FileSource {
	t.Helper()
	s, err := OpenFile(path, f, loop)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A one-second file plays as 50 frames in the room's format, its tones where they belong: each
// side of a stereo file on its own side of a stereo room, both mixed into a mono room, a mono
// file on both sides.
func TestFileSourcePlaysInTheRoomsFormat(t *testing.T) {
	stereo := opusFile(t, "1", toneL, toneR)
	mono := opusFile(t, "1", toneL)
	for _, c := range []struct {
		name       string
		path       string
		f          Format
		want       [2][2]float64 // want[channel] = level of 440 Hz, 660 Hz
		monoSource bool
	}{
		{"stereo file, 48 kHz stereo room", stereo, Format{48000, 2}, [2][2]float64{{toneAmp, 0}, {0, toneAmp}}, false},
		{"stereo file, 16 kHz mono room", stereo, Format{16000, 1}, [2][2]float64{{toneAmp / 2, toneAmp / 2}}, false},
		{"mono file, 16 kHz mono room", mono, Format{16000, 1}, [2][2]float64{{toneAmp, 0}}, true},
		{"mono file, 8 kHz stereo room", mono, Format{8000, 2}, [2][2]float64{{toneAmp, 0}, {toneAmp, 0}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, c.path, c.f, false)
			frames, misses := drain(t, s, 1000)
			if n := len(frames); n < 50 || n > 51 {
				t.Fatalf("%d frames of 20 ms from a one-second file", n)
			}
			if got := s.Underruns(); got != misses {
				t.Errorf("Underruns %d, the mixer saw %d", got, misses)
			}
			var pcm []int16
			for _, fr := range frames[5:45] { // past the encoder's start, before its end
				if len(fr) != c.f.FrameLen() {
					t.Fatalf("frame of %d values, want %d", len(fr), c.f.FrameLen())
				}
				pcm = append(pcm, fr...)
			}
			for ch := 0; ch < c.f.Channels; ch++ {
				for i, freq := range []float64{440, 660} {
					got, want := ToneLevel(pcm, c.f.Channels, ch, c.f.Rate, freq), c.want[ch][i]
					if (want == 0 && got > 0.02) || (want > 0 && (got < 0.85*want || got > 1.1*want)) {
						t.Errorf("channel %d: %.0f Hz at %.3f, want %.3f", ch, freq, got, want)
					}
				}
			}
			if s.Err() != nil {
				t.Errorf("Err after a clean file: %v", s.Err())
			}
			if _, ok := s.Next(); ok || !s.Done() {
				t.Error("a frame after the end")
			}
		})
	}
}

// A chained file (two Ogg/Opus files concatenated) plays one link after the other.
func TestFileSourcePlaysAChainedFile(t *testing.T) {
	a, errA := os.ReadFile(opusFile(t, "1", toneL))
	b, errB := os.ReadFile(opusFile(t, "0.5", toneR))
	chained := filepath.Join(t.TempDir(), "chained.opus")
	if err := errors.Join(errA, errB, os.WriteFile(chained, append(a, b...), 0o644)); err != nil {
		t.Fatal(err)
	}
	s := open(t, chained, Format{16000, 1}, false)
	frames, _ := drain(t, s, 1000)
	if len(frames) < 75 || len(frames) > 76 {
		t.Fatalf("%d frames from 1.5 s", len(frames))
	}
	for _, part := range []struct {
		from, to int
		freq     float64
	}{{5, 45, 440}, {55, 70, 660}} {
		var pcm []int16
		for _, fr := range frames[part.from:part.to] {
			pcm = append(pcm, fr...)
		}
		if got := ToneLevel(pcm, 1, 0, 16000, part.freq); got < 0.85*toneAmp {
			t.Errorf("frames %d-%d: %.0f Hz at %.3f", part.from, part.to, part.freq, got)
		}
	}
}

// A looping file restarts: it plays far more frames than it holds and is never done.
func TestFileSourceLoops(t *testing.T) {
	s := open(t, opusFile(t, "0.2", toneL), Format{16000, 1}, true)
	frames, _ := drain(t, s, 35)
	if len(frames) != 35 || s.Done() {
		t.Fatalf("%d frames from a looping 10-frame file (done %v)", len(frames), s.Done())
	}
	var pcm []int16
	for _, fr := range frames[15:35] { // the second and third passes
		pcm = append(pcm, fr...)
	}
	if got := ToneLevel(pcm, 1, 0, 16000, 440); got < 0.8*toneAmp {
		t.Errorf("440 Hz at %.3f after looping, want about %.3f", got, toneAmp)
	}
}

// Files that are not playable are refused when opened, with the path and the reason.
func TestOpenFileRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(opusFile(t, "1", toneL))
	if err != nil {
		t.Fatal(err)
	}
	// The header pages (OpusHead, OpusTags) end where the third page starts.
	third := bytes.Index(good[bytes.Index(good[4:], []byte("OggS"))+8:], []byte("OggS"))
	third += bytes.Index(good[4:], []byte("OggS")) + 8
	wav := filepath.Join(dir, "tone.wav")
	tool(t, "ffmpeg", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000", "-t", "0.5", wav)
	three := filepath.Join(dir, "three.opus")
	tool(t, "ffmpeg", "-f", "lavfi", "-i", "aevalsrc="+toneL+"|0|0:s=48000:d=0.2:c=3.0", "-c:a", "libopus", three)
	fifo := filepath.Join(dir, "fifo.opus")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ path, reason string }{
		{filepath.Join(dir, "missing.opus"), "no such file"},
		{write("empty.opus", nil), "empty file"},
		{write("text.opus", []byte("this is not an announcement, just text\n")), "not an Ogg/Opus file"},
		{wav, "not an Ogg/Opus file"},
		{write("head.opus", good[:60]), "malformed Opus header"},
		{write("headers.opus", good[:third]), "no playable audio"},
		{write("cut.opus", good[:third+20]), "no playable audio"},
		{dir, "not a regular file"},
		{fifo, "not a regular file"}, // refused without blocking until a writer comes
		{three, "3 channels"},
	} {
		s, err := OpenFile(c.path, Format{16000, 1}, true)
		if err == nil {
			s.Close()
			t.Errorf("%s opened", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %q, want the path and %q", filepath.Base(c.path), err, c.reason)
		}
	}
	_, err = OpenFile(filepath.Join(dir, "missing.opus"), Format{16000, 1}, false)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := OpenFile(write("ok.opus", good), Format{44100, 1}, false); err == nil {
		t.Error("a 44.1 kHz room accepted")
	}
}

// A file cut in the middle of its audio plays its complete pages (of 100 ms here), then ends.
func TestFileSourcePlaysATruncatedFileToTheCut(t *testing.T) {
	good, err := os.ReadFile(opusFileArgs(t, "1", []string{"-page_duration", "100000"}, toneL))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.opus")
	if err := os.WriteFile(cut, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, cut, Format{16000, 1}, false)
	frames, _ := drain(t, s, 1000)
	if n := len(frames); n < 15 || n > 35 || !s.Done() {
		t.Fatalf("%d frames from half a one-second file (done %v)", n, s.Done())
	}
}

// readerRunning reports whether a FileSource reader goroutine is still alive after a second's
// grace: Close returns once the reader has closed the file, a moment before its goroutine ends.
func readerRunning() bool {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		if !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("(*FileSource).run")) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
	}
}

// Close stops the reader (whether it is decoding or waiting for room in the ring) and may be
// called twice; Next returns nothing afterwards.
func TestFileSourceCloseStopsTheReader(t *testing.T) {
	path := opusFile(t, "0.5", toneL)
	for _, consume := range []int{0, 30} {
		s, err := OpenFile(path, Format{48000, 2}, true)
		if err != nil {
			t.Fatal(err)
		}
		drain(t, s, consume)
		s.Close()
		s.Close()
		if _, ok := s.Next(); ok {
			t.Error("a frame after Close")
		}
	}
	if readerRunning() {
		t.Fatal("a reader goroutine outlived Close")
	}
}

// Next allocates nothing, whether a frame is ready or not.
func TestFileSourceNextAllocatesNothing(t *testing.T) {
	s := open(t, opusFile(t, "1", toneL), Format{16000, 1}, true)
	if n := testing.AllocsPerRun(500, func() { s.Next() }); n != 0 {
		t.Fatalf("%.1f allocations per Next", n)
	}
}

// BenchmarkFileSourceNext takes frames from a looping 16 kHz mono announcement as fast as the
// reader decodes them: an op is one frame delivered, so ns/op is the reader's cost per 20 ms
// (libopusfile, the 48 → 16 kHz filter, the ring) and allocs/op counts both goroutines: Next
// allocates nothing; the few bytes per op are the reader's new libopusfile stream each time the
// one-second file loops.
func BenchmarkFileSourceNext(b *testing.B) {
	s, err := OpenFile(opusFile(b, "1", toneL), Format{16000, 1}, true)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		for _, ok := s.Next(); !ok; _, ok = s.Next() {
			runtime.Gosched()
		}
	}
}

// The fuzz seed committed under testdata (100 ms of ffmpeg's default 440 Hz sine, amplitude 1/8,
// at 12 kb/s) plays as five frames holding the tone.
func TestFileSourcePlaysTheFuzzSeed(t *testing.T) {
	s := open(t, "testdata/tone-100ms.opus", Format{8000, 1}, false)
	frames, _ := drain(t, s, 1000)
	if len(frames) != 5 {
		t.Fatalf("%d frames from a 100 ms file", len(frames))
	}
	var pcm []int16
	for _, fr := range frames[1:] {
		pcm = append(pcm, fr...)
	}
	if got := ToneLevel(pcm, 1, 0, 8000, 440); got < 0.08 || got > 0.15 {
		t.Fatalf("440 Hz at %.3f, want about 0.125", got)
	}
}
