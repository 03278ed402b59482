package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/source"
)

// checkPacing checks no packet left before its time: packet i arrives at least its timestamp's
// distance from the first (a lower bound, so a slow machine cannot fail it).
func checkPacing(t *testing.T, pkts []rtp.Packet, at []time.Duration, clock uint32) {
	t.Helper()
	const early = 25 * time.Millisecond // a timer's and the scheduler's slack
	for i := range pkts {
		due := time.Duration(pkts[i].Timestamp-pkts[0].Timestamp) * time.Second / time.Duration(clock)
		if got := at[i] - at[0]; got < due-early {
			t.Fatalf("packet %d (timestamp +%v) sent %v after the first: too early", i, due, got)
		}
	}
}

// TestJanusSampleFiles plays the raw G.711 samples Janus's stock mountpoints stream, as Janus
// sends them: 160-byte frames, timestamps 160 apart, static payload types, the first marked.
func TestJanusSampleFiles(t *testing.T) {
	for _, c := range []struct {
		file  string
		codec media.Codec
		pt    uint8
	}{
		{"radio.alaw", media.CodecPCMA, 8},
		{"music.mulaw", media.CodecPCMU, 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("/usr/share/janus/streams", c.file)
			s, caps := openCaptured(t, path, Options{Loop: true})
			tr := s.Tracks()
			if len(tr) != 1 || tr[0].Kind != source.Audio || tr[0].Codec != c.codec || tr[0].PT != c.pt {
				t.Fatalf("tracks %+v, want one %v audio track, PT %d", tr, c.codec, c.pt)
			}
			s.Start()
			time.Sleep(500 * time.Millisecond)
			s.Close()
			pkts, at := caps[0].packets()
			if len(pkts) < 10 {
				t.Fatalf("%d packets in 500 ms", len(pkts))
			}
			if !pkts[0].Marker || pkts[1].Marker {
				t.Errorf("marker: first %v, second %v; Janus marks the first packet only", pkts[0].Marker, pkts[1].Marker)
			}
			for i, d := range checkSequence(t, pkts) {
				if d != 160 {
					t.Fatalf("packet %d: timestamp step %d, want 160", i+1, d)
				}
			}
			want, _ := os.ReadFile(path)
			for i, p := range pkts {
				if p.PayloadType != c.pt || len(p.Payload) != 160 || string(p.Payload) != string(want[i*160:(i+1)*160]) {
					t.Fatalf("packet %d: PT %d, %d bytes, not the file's frame %d", i, p.PayloadType, len(p.Payload), i)
				}
			}
			checkPacing(t, pkts, at, 8000)
		})
	}
}

// TestOggOpusOndemand plays an ffmpeg-made Ogg/Opus file once (several packets per page, 60 ms
// packets in one case), writes what it sent back with Pion's oggwriter and has ffmpeg decode
// it: same packets, same duration, no errors, and no packet sent early.
func TestOggOpusOndemand(t *testing.T) {
	for _, c := range []struct {
		name     string
		frameMs  string
		channels string
	}{
		{"mono-20ms", "20", "1"},
		{"stereo-60ms", "60", "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := ffmpeg(t, "in.opus", "-f", "lavfi", "-i", "sine=frequency=440:duration=1.5",
				"-ac", c.channels, "-c:a", "libopus", "-b:a", "32k", "-frame_duration", c.frameMs)
			s, caps := openCaptured(t, in, Options{AudioPT: 109})
			tr := s.Tracks()[0]
			if tr.Codec != media.CodecOpus || tr.PT != 109 || !strings.Contains(tr.Fmtp, "useinbandfec=1") ||
				strings.Contains(tr.Fmtp, "stereo=1") != (c.channels == "2") {
				t.Fatalf("track %+v", tr)
			}
			s.Start()
			took := waitDone(t, s, 10*time.Second)
			pkts, at := caps[0].packets()
			want := probeInt(t, in, "a", "nb_read_packets")
			if len(pkts) != want {
				t.Fatalf("%d packets sent, the file has %d", len(pkts), want)
			}
			var samples uint32
			for i, d := range checkSequence(t, pkts) {
				if n := uint32(media.OpusSamples(pkts[i].Payload)); d != n {
					t.Fatalf("packet %d: timestamp step %d, the packet before lasts %d samples", i+1, d, n)
				}
				samples += d
			}
			dur := time.Duration(samples) * time.Second / 48000
			if took < dur-50*time.Millisecond {
				t.Errorf("played %v of audio in %v", dur, took)
			}
			checkPacing(t, pkts, at, 48000)

			out := filepath.Join(t.TempDir(), "out.opus")
			w, err := oggwriter.New(out, 48000, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i := range pkts {
				if err := w.WriteRTP(&pkts[i]); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			if e := decodeErrors(t, out); e != "" {
				t.Fatalf("ffmpeg decoding what was sent: %s", e)
			}
			if got := probeInt(t, out, "a", "nb_read_packets"); got != want {
				t.Errorf("ffmpeg read %d packets of what was sent, want %d", got, want)
			}
			t.Logf("%d packets, %v of audio, played in %v", len(pkts), dur, took)
		})
	}
}

// TestLoopContinues loops a short file: sequence numbers and timestamps go on across the restart
// as if the file were longer.
func TestLoopContinues(t *testing.T) {
	for _, c := range []struct{ name, ext, codec string }{
		{"opus", "opus", "libopus"},
		{"mulaw", "mulaw", "pcm_mulaw"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"-f", "lavfi", "-i", "sine=frequency=440:duration=0.3", "-c:a", c.codec}
			if c.ext == "mulaw" {
				args = append(args, "-ar", "8000", "-ac", "1", "-f", "mulaw")
			}
			in := ffmpeg(t, "in."+c.ext, args...)
			s, caps := openCaptured(t, in, Options{Loop: true})
			s.Start()
			deadline := time.Now().Add(5 * time.Second)
			for s.Stats().Loops < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			s.Close()
			if l := s.Stats().Loops; l < 2 {
				t.Fatalf("%d loops in 5 s of a 0.3 s file", l)
			}
			select {
			case <-s.Done():
			default:
				t.Fatal("Done is not closed after Close")
			}
			pkts, _ := caps[0].packets()
			clock := s.Tracks()[0].Codec.ClockRate()
			for i, d := range checkSequence(t, pkts) {
				want := uint32(160)
				if clock == 48000 {
					want = uint32(media.OpusSamples(pkts[i].Payload))
				}
				if d != want {
					t.Fatalf("packet %d: timestamp step %d, want %d", i+1, d, want)
				}
			}
		})
	}
}

// TestCloseAndStart: Close before Start, during playback and twice; Start after Close.
func TestCloseAndStart(t *testing.T) {
	path := "/usr/share/janus/streams/music.mulaw"
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Start()
	<-s.Done()
	s.Close()

	s, caps := openCaptured(t, path, Options{})
	s.Start()
	s.Start()
	time.Sleep(100 * time.Millisecond)
	s.Close()
	<-s.Done()
	n := len(caps[0].pkts)
	time.Sleep(60 * time.Millisecond)
	if m, _ := caps[0].packets(); len(m) != n || n == 0 {
		t.Fatalf("%d packets before Close, %d after", n, len(m))
	}
}
