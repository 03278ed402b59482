package file

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4/pkg/media/ivfwriter"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/source"
)

// TestWebMOndemand plays ffmpeg-made WebM/Matroska files with VP8 or VP9 and Opus once, writes
// what was sent back into IVF and Ogg files with Pion's writers and has ffmpeg decode them: as
// many video frames and audio packets as the file holds, no decoding errors, packets not early,
// markers on frames' last packets, timestamps the file's.
func TestWebMOndemand(t *testing.T) {
	for _, c := range []struct {
		name, file, vcodec string
		codec              media.Codec
	}{
		{"vp8", "in.webm", "libvpx", media.CodecVP8},
		{"vp9-mkv", "in.mkv", "libvpx-vp9", media.CodecVP9},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := ffmpeg(t, c.file, "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2",
				"-f", "lavfi", "-i", "sine=duration=2", "-c:v", c.vcodec, "-b:v", "400k", "-deadline", "realtime",
				"-cpu-used", "8", "-g", "25", "-c:a", "libopus")
			s, caps := openCaptured(t, in, Options{VideoPT: 96})
			tr := s.Tracks()
			if len(tr) != 2 || tr[0].Kind != source.Video || tr[0].Codec != c.codec || tr[0].PT != 96 ||
				tr[1].Kind != source.Audio || tr[1].Codec != media.CodecOpus || tr[1].PT != ptOpus {
				t.Fatalf("tracks %+v", tr)
			}
			s.Start()
			took := waitDone(t, s, 15*time.Second)
			video, vat := caps[0].packets()
			audio, aat := caps[1].packets()
			checkSequence(t, video)
			checkSequence(t, audio)
			checkPacing(t, video, vat, 90000)
			checkPacing(t, audio, aat, 48000)
			if took < 1900*time.Millisecond {
				t.Errorf("2 s of media played in %v", took)
			}

			frames := 0
			for i, p := range video {
				last := i == len(video)-1 || video[i+1].Timestamp != p.Timestamp
				if p.Marker != last {
					t.Fatalf("video packet %d: marker %v, last of its frame %v", i, p.Marker, last)
				}
				if last {
					frames++
				}
				if len(p.Payload) > videoMTU {
					t.Fatalf("video packet %d: %d bytes", i, len(p.Payload))
				}
			}
			wantFrames := probeInt(t, in, "v", "nb_read_packets")
			if frames != wantFrames {
				t.Errorf("%d video frames sent, the file has %d", frames, wantFrames)
			}
			// 25 fps: the timestamps of frame n is n × 3600.
			if span := video[len(video)-1].Timestamp - video[0].Timestamp; span != uint32(wantFrames-1)*3600 {
				t.Errorf("video timestamps span %d, want %d", span, (wantFrames-1)*3600)
			}
			ivf := filepath.Join(t.TempDir(), "out.ivf")
			writeBack(t, video, func() (rtpWriter, error) {
				return ivfwriter.New(ivf, ivfwriter.WithCodec(c.codec.MimeType()))
			})
			if e := decodeErrors(t, ivf); e != "" {
				t.Fatalf("ffmpeg decoding the video sent: %s", e)
			}
			if got := probeInt(t, ivf, "v", "nb_read_frames"); got != wantFrames {
				t.Errorf("ffmpeg decoded %d frames of the video sent, want %d", got, wantFrames)
			}

			ogg := filepath.Join(t.TempDir(), "out.opus")
			writeBack(t, audio, func() (rtpWriter, error) { return oggwriter.New(ogg, 48000, 2) })
			if e := decodeErrors(t, ogg); e != "" {
				t.Fatalf("ffmpeg decoding the audio sent: %s", e)
			}
			if got, want := probeInt(t, ogg, "a", "nb_read_packets"), probeInt(t, in, "a", "nb_read_packets"); got != want {
				t.Errorf("%d audio packets sent, the file has %d", got, want)
			}
			t.Logf("%d video packets (%d frames), %d audio packets in %v", len(video), frames, len(audio), took)
		})
	}
}

type rtpWriter interface {
	WriteRTP(*rtp.Packet) error
	Close() error
}

func writeBack(t *testing.T, pkts []rtp.Packet, open func() (rtpWriter, error)) {
	t.Helper()
	w, err := open()
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		if err := w.WriteRTP(&pkts[i]); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWebMLoop loops a short WebM file: both tracks go on across the restart, without a step
// back in their timestamps, and video goes on at its frame interval (a little more where the
// file restarts: a pass lasts as long as its longest track, the audio here).
func TestWebMLoop(t *testing.T) {
	in := ffmpeg(t, "in.webm", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=0.5",
		"-f", "lavfi", "-i", "sine=duration=0.5", "-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libopus")
	s, caps := openCaptured(t, in, Options{Loop: true})
	s.Start()
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Loops < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.Close()
	if s.Stats().Loops < 2 {
		t.Fatalf("%d loops", s.Stats().Loops)
	}
	video, _ := caps[0].packets()
	checkSequence(t, video)
	var prev uint32
	for i, p := range video {
		if d := p.Timestamp - prev; i > 0 && d != 0 && (d < 9000 || d >= 2*9000) {
			t.Fatalf("video packet %d: timestamp step %d, want 9000 (10 fps)", i, d)
		}
		prev = p.Timestamp
	}
	audio, _ := caps[1].packets()
	for i, d := range checkSequence(t, audio) {
		if d > 2*960 || d == 0 {
			t.Fatalf("audio packet %d: timestamp step %d", i+1, d)
		}
	}
}

// TestWebMBadInput: unsupported codecs and things that are not Matroska fail at Open, clearly.
func TestWebMBadInput(t *testing.T) {
	h264 := ffmpeg(t, "h264.mkv", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=0.3", "-c:v", "libx264")
	vorbis := ffmpeg(t, "vorbis.webm", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=0.3",
		"-f", "lavfi", "-i", "sine=duration=0.3", "-c:v", "libvpx", "-c:a", "libvorbis")
	opus := ffmpeg(t, "a.opus", "-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "libopus")
	for _, c := range []struct{ name, path, want string }{
		{"H.264 in MKV", h264, "codec V_MPEG4/ISO/AVC is not supported"},
		{"Vorbis in WebM", vorbis, "codec A_VORBIS is not supported"},
		{"text named .webm", writeFile(t, "x.webm", []byte(strings.Repeat("not a video ", 50))), "not a WebM/Matroska file"},
		{"Ogg named .mkv", copyFile(t, opus, "x.mkv"), "not a WebM/Matroska file"},
		{"EBML magic only", writeFile(t, "m.webm", []byte{0x1a, 0x45, 0xdf, 0xa3, 0x80}), "document type"},
	} {
		_, err := Open(c.path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
