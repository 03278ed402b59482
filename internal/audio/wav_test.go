package audio

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// stereoTone writes 440 Hz on the left and 660 Hz on the right (a mono frame gets 440 Hz) into
// pcm, continuing from sample index start, and returns the next index.
func stereoTone(pcm []int16, f Format, start int) int {
	left := make([]int16, f.Samples())
	right := make([]int16, f.Samples())
	Tone(left, 1, f.Rate, 440, 16000, start)
	next := Tone(right, 1, f.Rate, 660, 16000, start)
	for k := range left {
		pcm[k*f.Channels] = left[k]
		if f.Channels == 2 {
			pcm[k*2+1] = right[k]
		}
	}
	return next
}

// probe is what ffprobe -show_streams reports of a file's first stream.
type probe struct {
	Codec    string `json:"codec_name"`
	Rate     string `json:"sample_rate"`
	Channels int    `json:"channels"`
	Duration string `json:"duration"`
}

func ffprobe(t *testing.T, path string) probe {
	t.Helper()
	var out struct{ Streams []probe }
	if err := json.Unmarshal(tool(t, "ffprobe", "-show_streams", "-of", "json", path), &out); err != nil || len(out.Streams) != 1 {
		t.Fatalf("ffprobe %s: %v %+v", path, err, out)
	}
	return out.Streams[0]
}

// ffmpegPCM decodes a file with ffmpeg to raw 16-bit little-endian PCM.
func ffmpegPCM(t *testing.T, path string) []int16 {
	t.Helper()
	raw := tool(t, "ffmpeg", "-i", path, "-f", "s16le", "-acodec", "pcm_s16le", "-")
	pcm := make([]int16, len(raw)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return pcm
}

// A second of the mix recorded at 16 kHz mono and 48 kHz stereo is, for ffprobe, 16-bit PCM of
// that format lasting a second, and ffmpeg decodes exactly the samples written, tones where they
// were put.
func TestWAVRecorderRecordsTheMix(t *testing.T) {
	for _, f := range []Format{{16000, 1}, {48000, 2}} {
		path := filepath.Join(t.TempDir(), "janus-audioroom-1234-1700000000000.wav")
		r, err := NewWAVRecorder(path, f)
		if err != nil {
			t.Fatal(err)
		}
		var want []int16
		frame := make([]int16, f.FrameLen())
		idx := 0
		for range 50 {
			idx = stereoTone(frame, f, idx)
			r.Write(frame)
			want = append(want, frame...)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if written, dropped := r.Stats(); written != 50 || dropped != 0 {
			t.Fatalf("%v: %d frames written, %d dropped", f, written, dropped)
		}
		p := ffprobe(t, path)
		if p.Codec != "pcm_s16le" || p.Rate != strconv.Itoa(f.Rate) || p.Channels != f.Channels || p.Duration != "1.000000" {
			t.Fatalf("%v: ffprobe says %+v", f, p)
		}
		got := ffmpegPCM(t, path)
		if len(got) != len(want) {
			t.Fatalf("%v: ffmpeg decodes %d values, %d written", f, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: value %d is %d, %d written", f, i, got[i], want[i])
			}
		}
		const amp = 16000.0 / 32768
		if l := ToneLevel(got, f.Channels, 0, f.Rate, 440); l < 0.95*amp {
			t.Errorf("%v: 440 Hz at %.3f on the left", f, l)
		}
		if f.Channels == 2 {
			if l, r := ToneLevel(got, 2, 1, f.Rate, 660), ToneLevel(got, 2, 1, f.Rate, 440); l < 0.95*amp || r > 0.01 {
				t.Errorf("%v: right channel has 660 Hz at %.3f, 440 Hz at %.3f", f, l, r)
			}
		}
	}
}

// A recorder that cannot create its file is an error; so is a room format WAVE cannot hold here.
func TestWAVRecorderRefusesAnUnwritablePath(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		filepath.Join(dir, "missing", "rec.wav"), // record_dir that does not exist
		filepath.Join(notDir, "rec.wav"),         // record_dir that is a file
		dir,                                      // record_file that is a directory
	} {
		if r, err := NewWAVRecorder(path, Format{16000, 1}); err == nil {
			r.Close()
			t.Errorf("recording to %s accepted", path)
		}
	}
	if _, err := NewWAVRecorder(filepath.Join(dir, "rec.wav"), Format{44100, 1}); err == nil {
		t.Error("a 44.1 kHz format accepted")
	}
}

// Close may be called twice; frames written afterwards are dropped and counted.
func TestWAVRecorderCloseTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.wav")
	r, err := NewWAVRecorder(path, Format{8000, 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Write(make([]int16, 160))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Write(make([]int16, 160))
	if written, dropped := r.Stats(); written != 1 || dropped != 1 {
		t.Fatalf("%d written, %d dropped", written, dropped)
	}
	if p := ffprobe(t, path); p.Duration != "0.020000" {
		t.Fatalf("ffprobe says %+v", p)
	}
}

// stallFile is a file whose second write (the first flush after the header) waits until released,
// as a disk that falls behind.
type stallFile struct {
	*os.File
	writes  int
	stalled chan struct{} // closed when the write starts waiting
	release chan struct{}
}

func (s *stallFile) Write(p []byte) (int, error) {
	if s.writes++; s.writes == 2 {
		close(s.stalled)
		<-s.release
	}
	return s.File.Write(p)
}

// When the disk falls behind, Write neither blocks nor grows: the ring holds a second of frames
// and the rest are dropped and counted; what was queued is written in order once the disk
// recovers, and the header's sizes match.
func TestWAVRecorderDropsWhenTheDiskFallsBehind(t *testing.T) {
	f := Format{16000, 1} // 50 frames fit bufio's buffer: the first flush is the periodic one
	path := filepath.Join(t.TempDir(), "rec.wav")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sf := &stallFile{File: file, stalled: make(chan struct{}), release: make(chan struct{})}
	r, err := newWAVRecorder(sf, path, f)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, f.FrameLen())
	write := func(n int) {
		for range n {
			frame[0]++ // frames numbered 1, 2, …
			r.Write(frame)
		}
	}
	write(wavSyncFrames) // the writer flushes after these and stalls
	<-sf.stalled
	write(recorderRing + 10)
	if written, dropped := r.Stats(); written != wavSyncFrames || dropped != 10 {
		t.Fatalf("disk stalled: %d written, %d dropped", written, dropped)
	}
	close(sf.release)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if written, dropped := r.Stats(); written != wavSyncFrames+recorderRing || dropped != 10 {
		t.Fatalf("after recovering: %d written, %d dropped", written, dropped)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := wavSyncFrames + recorderRing
	if len(data) != wavHeaderLen+n*2*f.FrameLen() ||
		binary.LittleEndian.Uint32(data[4:]) != uint32(len(data)-8) ||
		binary.LittleEndian.Uint32(data[40:]) != uint32(len(data)-wavHeaderLen) {
		t.Fatalf("%d bytes, RIFF size %d, data size %d", len(data),
			binary.LittleEndian.Uint32(data[4:]), binary.LittleEndian.Uint32(data[40:]))
	}
	for i := range n {
		if got := binary.LittleEndian.Uint16(data[wavHeaderLen+i*2*f.FrameLen():]); int(got) != i+1 {
			t.Fatalf("frame %d holds frame %d", i+1, got)
		}
	}
}

// failFile is a disk that fills up after the header.
type failFile struct{ *os.File }

func (f failFile) Write(p []byte) (int, error) {
	if st, _ := f.Stat(); st.Size() >= wavHeaderLen {
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

// A failing disk makes Close report the error, naming the file; frames after the failure are
// dropped.
func TestWAVRecorderReportsAWriteError(t *testing.T) {
	f := Format{48000, 2} // a frame is 3840 bytes: bufio's 64 KiB fill within the first second
	path := filepath.Join(t.TempDir(), "rec.wav")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newWAVRecorder(failFile{file}, path, f)
	if err != nil {
		t.Fatal(err)
	}
	for range recorderRing {
		r.Write(make([]int16, f.FrameLen()))
	}
	err = r.Close()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Close: %v, want ENOSPC naming the file", err)
	}
	if written, dropped := r.Stats(); written+dropped != recorderRing || dropped == 0 {
		t.Fatalf("%d written, %d dropped", written, dropped)
	}
}

// Past the 4 GiB a WAVE header can describe, frames are dropped rather than written into a file
// whose sizes would wrap.
func TestWAVRecorderStopsAtTheSizeLimit(t *testing.T) {
	f := Format{16000, 1}
	r := &WAVRecorder{f: f, frames: [][]int16{make([]int16, f.FrameLen())}, lens: []int{f.FrameLen()}, free: make(chan int, 1)}
	w := &wavWriter{r: r, buf: bufio.NewWriter(io.Discard), bytes: make([]byte, 2*f.FrameLen())}
	w.data = wavMaxData - uint32(2*f.FrameLen()) // room for one more frame
	w.frame(0)
	<-r.free
	w.frame(0)
	if written, dropped := r.Stats(); written != 1 || dropped != 1 || w.data != wavMaxData {
		t.Fatalf("%d written, %d dropped, %d bytes of data", written, dropped, w.data)
	}
}

// Write allocates nothing, whether the frame is queued or dropped.
func TestWAVRecorderWriteAllocatesNothing(t *testing.T) {
	r, err := NewWAVRecorder(filepath.Join(t.TempDir(), "rec.wav"), Format{48000, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	frame := make([]int16, 1920)
	if n := testing.AllocsPerRun(200, func() { r.Write(frame) }); n != 0 {
		t.Fatalf("%.1f allocations per Write", n)
	}
}

// Recording from the mixer's goroutine while another closes it is race-free.
func TestWAVRecorderWriteDuringClose(t *testing.T) {
	r, err := NewWAVRecorder(filepath.Join(t.TempDir(), "rec.wav"), Format{8000, 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		frame := make([]int16, 320)
		for range 200 {
			r.Write(frame)
		}
	}()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if written, dropped := r.Stats(); written+dropped > 200 {
		t.Fatalf("%d written and %d dropped of 200", written, dropped)
	}
}

// BenchmarkWAVRecorderWrite records 48 kHz stereo frames as fast as the writer takes them (never
// letting the ring fill): an op is one frame written, so ns/op is the cost per 20 ms of both
// goroutines, and allocs/op counts both.
func BenchmarkWAVRecorderWrite(b *testing.B) {
	r, err := NewWAVRecorder(filepath.Join(b.TempDir(), "rec.wav"), Format{48000, 2})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	frame := make([]int16, 1920)
	b.ReportAllocs()
	var queued uint64
	for b.Loop() {
		for written, _ := r.Stats(); queued-written >= recorderRing-1; written, _ = r.Stats() {
			runtime.Gosched()
		}
		r.Write(frame)
		queued++
	}
	if _, dropped := r.Stats(); dropped != 0 {
		b.Fatalf("%d frames dropped", dropped)
	}
}
