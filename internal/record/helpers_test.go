package record

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// stream numbers the packets of one RTP stream, as a publisher does.
type stream struct {
	pt   uint8
	ssrc uint32
	seq  uint16
	ts   uint32
	step uint32 // timestamp increment per packet
}

// packet wraps payload in the stream's next packet, with an audio level extension as browsers
// send it (so the recording keeps header extensions as they came).
func (s *stream) packet(t testing.TB, payload []byte, marker bool) []byte {
	t.Helper()
	p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: s.pt, SequenceNumber: s.seq, Timestamp: s.ts,
		SSRC: s.ssrc, Marker: marker}, Payload: payload}
	if err := p.SetExtension(1, []byte{0x80 | 30}); err != nil {
		t.Fatal(err)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s.seq++
	s.ts += s.step
	return b
}

// toneFrames encodes secs seconds of a freq Hz tone into 20 ms frames with enc.
func toneFrames(t testing.TB, f audio.Format, freq float64, secs float64, enc func(pcm []int16, out []byte) (int, error)) [][]byte {
	t.Helper()
	pcm := make([]int16, f.FrameLen())
	var out [][]byte
	k := 0
	for i := 0; i < int(secs*1000/audio.FrameMs); i++ {
		k = audio.Tone(pcm, f.Channels, f.Rate, freq, 12000, k)
		buf := make([]byte, audio.MaxPacket)
		n, err := enc(pcm, buf)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, buf[:n])
	}
	return out
}

func opusTone(t testing.TB, freq, secs float64) [][]byte {
	t.Helper()
	f := audio.Format{Rate: 48000, Channels: 1}
	enc, err := audio.NewEncoder(f, audio.EncoderConfig{Bitrate: 32000})
	if err != nil {
		t.Fatal(err)
	}
	return toneFrames(t, f, freq, secs, enc.Encode)
}

// recorded is a real receiver with a recording as its sink.
type recorded struct {
	recv *sfu.Receiver
	mjr  *MJR
	path string
	base time.Duration
}

func newRecorded(t testing.TB, c media.Codec, opts ...Option) *recorded {
	t.Helper()
	r := &recorded{recv: sfu.NewReceiver(sfu.ReceiverConfig{ID: "rec", Codec: c}, nil),
		path: filepath.Join(t.TempDir(), "rec-"+c.String()+".mjr")}
	var err error
	if r.mjr, err = NewMJR(r.path, c, opts...); err != nil {
		t.Fatal(err)
	}
	r.base = sfu.Now()
	r.recv.AddSink(r.mjr)
	return r
}

// play writes pkts to the receiver every interval, starting at offset from the recording's start
// (the packets' clock, not the wall clock: the test runs faster than real time).
func (r *recorded) play(pkts [][]byte, offset, interval time.Duration) {
	for i, p := range pkts {
		r.recv.WriteRTP(0, p, r.base+offset+time.Duration(i)*interval)
	}
}

func (r *recorded) close(t testing.TB) {
	t.Helper()
	r.recv.RemoveSink(r.mjr)
	if err := r.mjr.Close(); err != nil {
		t.Fatal(err)
	}
}

// tool runs a program the tests check recordings with and returns its output (stdout and stderr).
func tool(t testing.TB, name string, args ...string) string {
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

// decodePCM decodes a media file with ffmpeg into mono 16-bit PCM at rate, on the file's
// timeline: where the timestamps jump (a paused stream), the gap is filled with silence.
func decodePCM(t testing.TB, path string, rate int) []int16 {
	t.Helper()
	raw := path + ".pcm"
	tool(t, "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", path, "-af", "aresample=async=1:first_pts=0",
		"-f", "s16le", "-ac", "1", "-ar", strconv.Itoa(rate), raw)
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, len(b)/2)
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, pcm); err != nil {
		t.Fatal(err)
	}
	return pcm
}
