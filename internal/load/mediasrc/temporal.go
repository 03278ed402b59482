package mediasrc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/strata-rtc/strata/internal/vp8enc"
)

// TemporalLayers describes a VP8 clip of three temporal layers in one stream (vp8enc's pattern
// 0,2,1,2: TL0 and TL1 at a quarter of the frame rate each, TL2 at half), each frame's layer
// written in its payload descriptor. Kbps are the cumulative targets (TL0, TL0+TL1, all).
type TemporalLayers struct {
	Width, Height int
	Kbps          [3]int
}

// SeedTemporal is seed 000's layered stream: base, spatial and temporal layers of 0.6, 0.6 and
// 1.2 Mbit/s, carried as VP8's TL0, TL1 and TL2 (VP8 has no spatial layers within one stream).
var SeedTemporal = TemporalLayers{Width: 1280, Height: 720, Kbps: [3]int{600, 1200, 2400}}

// temporalVersion names the layered clip's encoding in its file name: a change regenerates it.
const temporalVersion = "b"

// sceneFrames is how long each scene of the layered clip's content lasts (2.5 s).
const sceneFrames = clipFPS * 5 / 2

// scenes are the layered clip's content: four different lavfi sources one after another, under
// temporal noise so that the encoder needs its targets (as camera noise would make it), each a
// scene change the clip starts with a keyframe.
var scenes = []string{
	"testsrc2=s=%[1]dx%[2]d:r=%[3]d",
	"mandelbrot=s=%[1]dx%[2]d:r=%[3]d:end_pts=400",
	"life=s=96x54:r=%[3]d:mold=10:ratio=0.3:death_color=#303040:life_color=#e0c060:mold_color=#204020,scale=%[1]dx%[2]d:flags=bicubic",
	"sierpinski=s=%[1]dx%[2]d:r=%[3]d:type=triangle:jump=4",
}

// TemporalFile is the layered clip inside dir.
func TemporalFile(dir string, t TemporalLayers) string {
	return filepath.Join(dir, fmt.Sprintf("%s-vp8-tl3%s-%dx%d-%d-%d-%dk.ivf", clipVersion, temporalVersion, t.Width, t.Height, t.Kbps[0], t.Kbps[1], t.Kbps[2]))
}

// LoadTemporal ensures the layered clip (encoded once with libvpx, from content rendered by
// ffmpeg) and the Opus clip exist in dir, and reads them: one video clip whose frames carry
// their temporal layers.
func LoadTemporal(dir string, t TemporalLayers) (*Media, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if !exists(AudioFile(dir)) {
		if err := encodeAudio(dir); err != nil {
			return nil, err
		}
	}
	path := TemporalFile(dir, t)
	if !exists(path) {
		if err := encodeTemporal(path, t); err != nil {
			return nil, err
		}
	}
	c, err := ReadIVF(path)
	if err != nil {
		return nil, err
	}
	c.setTemporal()
	c.Layer = Layer{Width: t.Width, Height: t.Height, Kbps: t.Kbps[2]}
	a, err := ReadOgg(AudioFile(dir))
	if err != nil {
		return nil, err
	}
	return &Media{Video: []*VideoClip{c}, Audio: a}, nil
}

// setTemporal gives each frame its layer: the encoder drops no frame and restarts its pattern at
// every keyframe, so a frame's layer follows from its distance to the last keyframe.
func (c *VideoClip) setTemporal() {
	c.Temporal, c.TopTID = true, 2
	phase := 0
	for i := range c.Frames {
		if c.Frames[i].Key {
			phase = 0
		}
		tid, sync := vp8enc.PatternLayer(phase)
		c.Frames[i].TID, c.Frames[i].Sync = int8(tid), sync
		phase++
	}
}

// Thinned is the layered clip as a sender of its first layers temporal layers sends it (1 to 3:
// TL0 alone, TL0 and TL1, or all): a copy that shares the frames, whose pacer skips the frames of
// the other layers. Each subset decodes (every frame's references are in a lower layer).
func (c *VideoClip) Thinned(layers int) (*VideoClip, error) {
	if !c.Temporal || layers < 1 || layers > 3 {
		return nil, fmt.Errorf("mediasrc: %d temporal layers of a clip (temporal %v): want 1 to 3 of a layered clip", layers, c.Temporal)
	}
	t := *c
	t.TopTID = int8(layers - 1)
	return &t, nil
}

// encodeTemporal renders the scenes with ffmpeg (raw I420 on a pipe), encodes them with a
// three-layer libvpx encoder, a keyframe at each scene change, and
// writes the IVF file (under a temporary name, renamed when complete).
func encodeTemporal(path string, t TemporalLayers) error {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return errors.New("mediasrc: ffmpeg is needed to generate the test media (apt-get install ffmpeg)")
	}
	args := []string{"-hide_banner", "-loglevel", "error", "-filter_complex", sceneGraph(t.Width, t.Height), "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"}
	cmd := exec.Command(bin, args...)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	frames, encErr := encodeFrames(bufio.NewReaderSize(out, 1<<20), t)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("mediasrc: ffmpeg: %v: %s", err, stderr.String())
	}
	if encErr != nil {
		return encErr
	}
	if len(frames) != len(scenes)*sceneFrames {
		return fmt.Errorf("mediasrc: ffmpeg rendered %d frames, want %d", len(frames), len(scenes)*sceneFrames)
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	if err := os.WriteFile(tmp, ivfFile(t.Width, t.Height, frames), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// sceneGraph is the lavfi graph of the scenes, concatenated, under noise.
func sceneGraph(w, h int) string {
	g := ""
	for i, s := range scenes {
		g += fmt.Sprintf(s, w, h, clipFPS) + ",trim=end_frame=" + strconv.Itoa(sceneFrames) +
			",setpts=PTS-STARTPTS,format=yuv420p" + fmt.Sprintf("[s%d];", i)
	}
	for i := range scenes {
		g += fmt.Sprintf("[s%d]", i)
	}
	return g + fmt.Sprintf("concat=n=%d:v=1,noise=alls=6:allf=t,format=yuv420p", len(scenes))
}

// encodeFrames encodes the raw frames read from r, a keyframe at each scene's first frame (2.5 s
// apart: a receiver that asks for one waits for the next scene, or the SFU's request makes the
// publisher skip ahead to it).
func encodeFrames(r io.Reader, t TemporalLayers) ([][]byte, error) {
	enc, err := vp8enc.NewTemporal(t.Width, t.Height, clipFPS,
		[3]float64{float64(t.Kbps[0]) * 1000, float64(t.Kbps[1]) * 1000, float64(t.Kbps[2]) * 1000})
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	raw := make([]byte, t.Width*t.Height*3/2)
	var frames [][]byte
	for i := 0; ; i++ {
		if _, err := io.ReadFull(r, raw); errors.Is(err, io.EOF) {
			return frames, nil
		} else if err != nil {
			return nil, fmt.Errorf("mediasrc: reading rendered frame %d: %w", i, err)
		}
		if i%sceneFrames == 0 {
			enc.ForceKeyframe()
		}
		data, _, err := enc.Encode(raw, int64(i)*90000/clipFPS)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, fmt.Errorf("mediasrc: the layered encoder dropped frame %d", i)
		}
		frames = append(frames, append([]byte(nil), data...))
	}
}

// ivfFile is an IVF file (32-byte header, then per frame a 12-byte header: size, pts) of VP8
// frames at clipFPS.
func ivfFile(w, h int, frames [][]byte) []byte {
	b := make([]byte, 32, 32+len(frames)*12)
	copy(b, "DKIF")
	binary.LittleEndian.PutUint16(b[6:], 32)
	copy(b[8:], "VP80")
	binary.LittleEndian.PutUint16(b[12:], uint16(w))
	binary.LittleEndian.PutUint16(b[14:], uint16(h))
	binary.LittleEndian.PutUint32(b[16:], clipFPS) // timebase denominator: frame indexes as pts
	binary.LittleEndian.PutUint32(b[20:], 1)
	binary.LittleEndian.PutUint32(b[24:], uint32(len(frames)))
	for i, f := range frames {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f)))
		b = binary.LittleEndian.AppendUint64(b, uint64(i))
		b = append(b, f...)
	}
	return b
}

// limitedBuffer keeps the first 4 KiB written to it (ffmpeg's error output).
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p[:min(len(p), max(0, 4096-len(l.b)))]...)
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

// LayerKbps is each temporal layer's own average rate of payload bytes over the clip (kbit/s).
func (c *VideoClip) LayerKbps() [3]float64 {
	var bytes [3]int
	for _, f := range c.Frames {
		for _, ch := range f.Chunks {
			bytes[max(0, min(int(f.TID), 2))] += len(ch)
		}
	}
	secs := (time.Duration(len(c.Frames)) * c.Interval).Seconds()
	var out [3]float64
	for l, b := range bytes {
		out[l] = float64(b) * 8 / secs / 1000
	}
	return out
}
