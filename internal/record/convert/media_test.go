package convert

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4/pkg/media/h264reader"
	"github.com/pion/webrtc/v4/pkg/media/ivfreader"

	"github.com/strata-rtc/strata/internal/media"
)

// The clips the tests send: ffmpeg's test pattern and a 440 Hz sine, encoded by ffmpeg as a
// WebRTC sender would (no B-frames, a keyframe every 2 s).
const (
	clipSecs = 10
	clipFPS  = 30
)

// sent is one RTP packet and when it arrived, relative to the start of the sending.
type sent struct {
	b  []byte
	at time.Duration
}

var (
	clipDir  string
	clipOnce sync.Once
	clipMu   sync.Mutex
)

// clip encodes (once per test binary and name) a clip with ffmpeg and returns its path.
func clip(t *testing.T, name string, args ...string) string {
	t.Helper()
	clipOnce.Do(func() {
		var err error
		if clipDir, err = os.MkdirTemp("", "strata-clips-"); err != nil {
			t.Fatal(err)
		}
	})
	clipMu.Lock()
	defer clipMu.Unlock()
	path := filepath.Join(clipDir, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tool(t, "ffmpeg", append(append([]string{"-v", "error", "-y"}, args...), path)...)
	return path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if clipDir != "" {
		os.RemoveAll(clipDir)
	}
	os.Exit(code)
}

var testsrc = []string{"-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "10", "-pix_fmt", "yuv420p", "-g", "60"}

// videoClip encodes the test pattern with codec c.
func videoClip(t *testing.T, c media.Codec) string {
	switch c {
	case media.CodecVP8:
		return clip(t, "vp8.ivf", append(testsrc, "-c:v", "libvpx", "-deadline", "realtime", "-b:v", "600k")...)
	case media.CodecVP9:
		return clip(t, "vp9.ivf", append(testsrc, "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "600k")...)
	case media.CodecAV1:
		return clip(t, "av1.ivf", append(testsrc, "-c:v", "libaom-av1", "-usage", "realtime", "-cpu-used", "8", "-b:v", "600k")...)
	case media.CodecH264:
		return clip(t, "h264.h264", append(testsrc, "-c:v", "libx264", "-profile:v", "baseline", "-tune", "zerolatency",
			"-x264-params", "aud=1", "-bsf:v", "h264_mp4toannexb", "-f", "h264")...)
	}
	t.Fatalf("no clip of %s", c)
	return ""
}

// opusClip encodes the sine in 20 ms Opus packets, one per Ogg page so they are easy to read.
func opusClip(t *testing.T) string {
	return clip(t, "sine.ogg", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "10",
		"-c:a", "libopus", "-b:a", "48k", "-frame_duration", "20", "-application", "lowdelay")
}

// videoPackets packetizes a video clip as a WebRTC sender does: the packets of a frame leave
// together at the frame's time, starting at start.
func videoPackets(t *testing.T, c media.Codec, path string, start time.Duration) []sent {
	t.Helper()
	frames := videoFrames(t, c, path)
	var pay rtp.Payloader
	switch c {
	case media.CodecVP8:
		pay = &codecs.VP8Payloader{EnablePictureID: true}
	case media.CodecVP9:
		pay = &codecs.VP9Payloader{InitialPictureIDFn: func() uint16 { return 100 }}
	case media.CodecAV1:
		pay = &codecs.AV1Payloader{}
	case media.CodecH264:
		pay = &codecs.H264Payloader{}
	}
	var out []sent
	seq := uint16(65000)
	for i, f := range frames {
		at := time.Duration(i) * time.Second / clipFPS
		ps := pay.Payload(1200, f)
		for k, p := range ps {
			b, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Marker: k == len(ps)-1,
				Timestamp: uint32(4000000000 + 3000*i), SSRC: 0x1234}, Payload: p}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			seq++
			out = append(out, sent{b: b, at: start + at + time.Duration(k)*50*time.Microsecond})
		}
	}
	return out
}

// videoFrames reads a clip's frames: IVF frames, or H.264 access units (split at each AUD).
func videoFrames(t *testing.T, c media.Codec, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	if c == media.CodecH264 {
		// Pion's reader, not mediacommon's AnnexB: that one refuses more than 50 NAL units, and a
		// clip has hundreds.
		r, err := h264reader.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var cur []byte
		for {
			n, err := r.NextNAL()
			if errors.Is(err, io.EOF) {
				return append(frames, cur)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.UnitType == h264reader.NalUnitTypeAUD && cur != nil {
				frames, cur = append(frames, cur), nil
			}
			cur = append(append(cur, 0, 0, 0, 1), n.Data...)
		}
	}
	r, _, err := ivfreader.NewWith(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, _, err := r.ParseNextFrame()
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
}

// opusPackets reads the Opus packets of an Ogg file and sends one every 20 ms from start.
func opusPackets(t *testing.T, path string, start time.Duration) []sent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []sent
	var pkt []byte
	n := 0
	for len(b) >= 27 && string(b[:4]) == "OggS" {
		segs := int(b[26])
		table := b[27 : 27+segs]
		body := b[27+segs:]
		for _, l := range table {
			pkt = append(pkt, body[:l]...)
			body = body[l:]
			if l == 255 {
				continue
			}
			if n >= 2 { // after OpusHead and OpusTags
				i := n - 2
				p, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(30000 + i),
					Timestamp: uint32(123456 + 960*i), SSRC: 0x5678}, Payload: pkt}).Marshal()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, sent{b: p, at: start + time.Duration(i)*20*time.Millisecond})
			}
			n++
			pkt = nil
		}
		b = body
	}
	if len(out) < clipSecs*50-5 {
		t.Fatalf("%s: %d Opus packets", path, len(out))
	}
	return out
}
