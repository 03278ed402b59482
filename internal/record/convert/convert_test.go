package convert

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// tool runs a program the tests check files with and returns its output.
func tool(t *testing.T, name string, args ...string) string {
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

// toneRecording records secs seconds of a 440 Hz tone in 20 ms Opus packets through a real
// receiver, leaving out the packets lost, muting the receiver for those muted (a pause, which the
// recording's timestamps jump over), and returns the recording's path.
func toneRecording(t *testing.T, secs float64, lost, muted func(i int) bool) string {
	t.Helper()
	f := audio.Format{Rate: 48000, Channels: 1}
	enc, err := audio.NewEncoder(f, audio.EncoderConfig{Bitrate: 32000})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tone.mjr")
	recv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "rec", Codec: media.CodecOpus}, nil)
	m, err := record.NewMJR(path, media.CodecOpus)
	if err != nil {
		t.Fatal(err)
	}
	recv.AddSink(m)
	base := sfu.Now()
	pcm := make([]int16, f.FrameLen())
	k := 0
	for i := 0; i < int(secs*50); i++ {
		k = audio.Tone(pcm, 1, 48000, 440, 12000, k)
		buf := make([]byte, audio.MaxPacket)
		n, err := enc.Encode(pcm, buf)
		if err != nil {
			t.Fatal(err)
		}
		recv.SetMuted(muted(i))
		if lost(i) {
			continue
		}
		b, err := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(65500 + i),
			Timestamp: uint32(4294960000 + 960*i), SSRC: 42}, Payload: buf[:n]}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		recv.WriteRTP(0, b, base+time.Duration(i)*20*time.Millisecond)
	}
	recv.RemoveSink(m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

var durationRE = regexp.MustCompile(`^\d+\.\d+`)

// duration is what ffprobe says a file lasts.
func duration(t *testing.T, path string) float64 {
	t.Helper()
	out := strings.TrimSpace(tool(t, "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path))
	d, err := strconv.ParseFloat(durationRE.FindString(out), 64)
	if err != nil {
		t.Fatalf("ffprobe duration %q: %v", out, err)
	}
	return d
}

// decode decodes a file to mono 48 kHz PCM with ffmpeg.
func decode(t *testing.T, path string) []int16 {
	t.Helper()
	raw := path + ".pcm"
	tool(t, "ffmpeg", "-v", "error", "-y", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "48000", raw)
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

func level(pcm []int16, from, to float64) float64 {
	return audio.ToneLevel(pcm[int(from*48000):int(to*48000)], 1, 0, 48000, 440)
}

// A recording with a loss, or a pause, becomes an Ogg/Opus file that decodes without an error,
// lasts as long as the recording (the loss or pause is silence) and as long as janus-pp-rec's
// conversion, and holds the tone where it was sent.
func TestOpusRecordingBecomesOgg(t *testing.T) {
	gap := func(i int) bool { return i >= 50 && i < 60 } // 1.0-1.2 s
	never := func(int) bool { return false }
	t.Run("loss", func(t *testing.T) {
		in := toneRecording(t, 2, gap, never)
		if jumps := seqJumps(t, in); jumps != 1 {
			t.Fatalf("the recording's sequence numbers jump %d times, want once at the loss", jumps)
		}
		checkOgg(t, in)
	})
	t.Run("pause", func(t *testing.T) {
		in := toneRecording(t, 2, never, gap)
		if jumps := seqJumps(t, in); jumps != 0 {
			t.Fatalf("the paused recording's sequence numbers jump %d times: not a pause", jumps)
		}
		checkOgg(t, in)
	})
}

// seqJumps counts where a recording's sequence numbers do not follow on (a loss; a pause leaves
// them continuous, only the timestamps jump).
func seqJumps(t *testing.T, path string) int {
	t.Helper()
	r, err := record.OpenMJR(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	jumps, n := 0, 0
	var last uint16
	for ; ; n++ {
		f, err := r.Next()
		if err != nil {
			break
		}
		seq := binary.BigEndian.Uint16(f.RTP[2:])
		if n > 0 && seq != last+1 {
			jumps++
		}
		last = seq
	}
	if n != 90 {
		t.Fatalf("the recording holds %d packets, want 90", n)
	}
	return jumps
}

// checkOgg converts a 2 s recording whose 1.0-1.2 s are missing and checks the result.
func checkOgg(t *testing.T, in string) {
	out := filepath.Join(t.TempDir(), "tone.opus")
	st, err := File(out, in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", st.Summary(out))
	a := st.Tracks[0]
	if a.Frames != 100 || a.Silence != 10 || a.Dropped != 0 || len(st.Problems) != 0 || st.Duration != 2*time.Second {
		t.Fatalf("stats %+v, want 90 packets and 10 silence frames, 2 s", st)
	}
	if errs := tool(t, "ffmpeg", "-v", "error", "-i", out, "-f", "null", "-"); errs != "" {
		t.Fatalf("ffmpeg decoding errors:\n%s", errs)
	}
	pp := filepath.Join(t.TempDir(), "janus.opus")
	tool(t, "janus-pp-rec", in, pp)
	d, dpp := duration(t, out), duration(t, pp)
	t.Logf("duration %.3f s, janus-pp-rec's %.3f s", d, dpp)
	if d < 1.9 || d > 2.1 || d-dpp > 0.1 || dpp-d > 0.1 {
		t.Fatalf("duration %.3f s, want 2 ± 0.1 s and janus-pp-rec's %.3f ± 0.1 s", d, dpp)
	}
	pcm := decode(t, out)
	on1, gap, on2 := level(pcm, 0.2, 0.9), level(pcm, 1.02, 1.12), level(pcm, 1.3, 1.8)
	t.Logf("440 Hz level: %.3f before the loss, %.3f in it, %.3f after", on1, gap, on2)
	if on1 < 0.25 || on2 < 0.25 || gap > 0.02 {
		t.Fatalf("440 Hz level %.3f, %.3f, %.3f: want ≥ 0.25 around the loss (sent 0.37), < 0.02 in it", on1, gap, on2)
	}
}

// mjrFile builds a recording by hand: the info header, then one frame per packet.
func mjrFile(info string, pkts ...[]byte) []byte {
	file := append([]byte("MJR00002"), 0, byte(len(info)))
	file = append(file, info...)
	for i, b := range pkts {
		file = append(file, "MEET"...)
		file = binary.BigEndian.AppendUint32(file, uint32(20*i))
		file = binary.BigEndian.AppendUint16(file, uint16(len(b)))
		file = append(file, b...)
	}
	return file
}

func opusPacket(seq uint16) []byte {
	b, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, Timestamp: 960 * uint32(seq), SSRC: 5},
		Payload: []byte{0xf8, 0xff, 0xfe}}).Marshal()
	return b
}

const opusInfo = `{"t":"a","c":"opus","s":1,"u":2}`

// Packets out of order are put back in order, copies are dropped, and a file cut inside a packet
// converts up to it, saying so.
func TestOrdersAndSurvivesACut(t *testing.T) {
	var pkts [][]byte
	for _, s := range []uint16{1, 3, 2, 2, 4, 5, 6, 7} {
		pkts = append(pkts, opusPacket(s))
	}
	file := mjrFile(opusInfo, pkts...)
	in := filepath.Join(t.TempDir(), "cut.mjr")
	if err := os.WriteFile(in, file[:len(file)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cut.opus")
	st, err := File(out, in)
	if err != nil {
		t.Fatal(err)
	}
	a := st.Tracks[0]
	if a.Packets != 7 || a.Frames != 6 || a.Dropped != 1 || a.Silence != 0 || len(st.Problems) != 1 ||
		!strings.Contains(st.Problems[0], "cut short") {
		t.Fatalf("stats %+v", st)
	}
	if d := duration(t, out); d < 0.11 || d > 0.13 {
		t.Fatalf("duration %.3f s, want 0.12", d)
	}
}

func TestFileRefuses(t *testing.T) {
	dir := t.TempDir()
	vp8 := filepath.Join(dir, "v.mjr")
	m, err := record.NewMJR(vp8, media.CodecVP8)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	opus := filepath.Join(dir, "a.mjr")
	if err := os.WriteFile(opus, mjrFile(opusInfo, opusPacket(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	h264 := filepath.Join(dir, "h.mjr")
	if err := os.WriteFile(h264, mjrFile(`{"t":"v","c":"h264","s":1,"u":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "d.mjr")
	if err := os.WriteFile(data, mjrFile(`{"t":"d","c":"text","s":1,"u":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.mjr")
	if err := os.WriteFile(junk, []byte("RIFF....WAVEfmt "), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out  string
		ins  []string
		want string
	}{
		{"x.mov", []string{opus}, "unknown format"},
		{filepath.Join(dir, "x.opus"), []string{filepath.Join(dir, "nope.mjr")}, "no such file"},
		{filepath.Join(dir, "x.opus"), []string{vp8}, "holds no packets"},
		{filepath.Join(dir, "x.opus"), []string{junk}, "not a recording"},
		{filepath.Join(dir, "x.webm"), []string{data}, "data recording"},
		{filepath.Join(dir, "x.webm"), []string{opus, h264}, "h264 does not fit in webm"},
		{filepath.Join(dir, "x.opus"), []string{opus, opus}, "one Opus track"},
		{filepath.Join(dir, "x.mp4"), nil, "no recording"},
	} {
		_, err := File(tc.out, tc.ins...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("File(%s, %v): error %v, want it to say %q", tc.out, tc.ins, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.webm")); err == nil {
		t.Fatal("a refused conversion left its output")
	}
}

// FuzzConvert converts arbitrary recordings into each format: an error or a file, never a panic.
func FuzzConvert(f *testing.F) {
	var pkts [][]byte
	for _, s := range []uint16{3, 1, 2, 2, 65535, 0, 40} {
		pkts = append(pkts, opusPacket(s))
	}
	f.Add(mjrFile(opusInfo, pkts...), uint8(0))
	for _, c := range []string{"vp8", "vp9", "h264", "av1"} {
		vp := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: 7, Timestamp: 9, SSRC: 5, Marker: true},
			Payload: []byte{0x10, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00}}
		b, _ := vp.Marshal()
		f.Add(mjrFile(`{"t":"v","c":"`+c+`","s":1,"u":2}`, b, b), uint8(len(c)))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, format uint8) {
		in := filepath.Join(dir, "in.mjr")
		if err := os.WriteFile(in, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out"+[]string{".webm", ".opus", ".mp4"}[format%3])
		st, err := File(out, in)
		if err != nil {
			return
		}
		for _, tr := range st.Tracks {
			if tr.Frames > tr.Packets+tr.Silence {
				t.Fatalf("stats %+v: more frames than packets", st)
			}
		}
	})
}
