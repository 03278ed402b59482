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
	st, err := File(in, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats %+v", st)
	if st.Packets != 90 || st.Silence != 10 || st.Dropped != 0 || st.Cut || st.Duration != 2*time.Second {
		t.Fatalf("stats %+v, want 90 packets, 10 silence frames, 2 s", st)
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

// Packets out of order within the window are put back in order; copies and packets later than
// the window are dropped; a file cut inside a packet converts up to it.
func TestOpusOrdersPackets(t *testing.T) {
	var file bytes.Buffer
	file.WriteString("MJR00002")
	info := `{"t":"a","c":"opus","s":1,"u":2}`
	binary.Write(&file, binary.BigEndian, uint16(len(info)))
	file.WriteString(info)
	frame := func(seq uint16) {
		b, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, Timestamp: 960 * uint32(seq), SSRC: 5},
			Payload: []byte{0xf8, byte(seq), 0}}).Marshal()
		file.WriteString("MEET\x00\x00\x00\x00")
		binary.Write(&file, binary.BigEndian, uint16(len(b)))
		file.Write(b)
	}
	order := []uint16{1, 3, 2, 2, 4}
	for s := uint16(5); s < 5+Window; s++ {
		order = append(order, s)
	}
	order = append(order, 0) // older than the window: dropped
	for _, s := range order {
		frame(s)
	}
	frame(200)
	cut := file.Bytes()[:file.Len()-3]
	r, err := record.NewMJRReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	var w collect
	st, err := Opus(r, &w)
	if err != nil {
		t.Fatal(err)
	}
	if st.Packets != 4+Window || st.Dropped != 2 || !st.Cut || st.Silence != 0 {
		t.Fatalf("stats %+v", st)
	}
	for i, s := range w.seqs {
		if s != uint16(i+1) {
			t.Fatalf("written in order %v", w.seqs)
		}
	}
}

type collect struct{ seqs []uint16 }

func (c *collect) WriteRTP(p *rtp.Packet) error {
	c.seqs = append(c.seqs, p.SequenceNumber)
	return nil
}

func TestFileRefuses(t *testing.T) {
	dir := t.TempDir()
	vp8 := filepath.Join(dir, "v.mjr")
	m, err := record.NewMJR(vp8, media.CodecVP8)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	for _, tc := range []struct{ in, out, want string }{
		{"x.mjr", "x.webm", "unknown format"},
		{filepath.Join(dir, "nope.mjr"), filepath.Join(dir, "x.opus"), "no such file"},
		{vp8, filepath.Join(dir, "x.opus"), "holds no packets"},
	} {
		if _, err := File(tc.in, tc.out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("File(%s, %s): error %v, want it to say %q", tc.in, tc.out, err, tc.want)
		}
	}
}

func TestOpusSamples(t *testing.T) {
	for _, tc := range []struct {
		p    []byte
		want int
	}{
		{[]byte{0xf8}, 960},          // CELT FB 20 ms
		{[]byte{0x78}, 960},          // hybrid FB 20 ms
		{[]byte{0x18}, 2880},         // SILK NB 60 ms
		{[]byte{0xf9}, 1920},         // two 20 ms frames
		{[]byte{0xfb, 0x03}, 2880},   // three 20 ms frames (code 3)
		{[]byte{0xfb, 0x07}, 0},      // seven 20 ms frames: longer than 120 ms
		{[]byte{0xfb}, 0},            // code 3 without its count
		{[]byte{0xfb, 0x00}, 0},      // code 3, no frames
		{[]byte{0x03 << 3, 0}, 2880}, // SILK config 3: 60 ms
	} {
		if got := opusSamples(tc.p); got != tc.want {
			t.Errorf("opusSamples(% x) = %d, want %d", tc.p, got, tc.want)
		}
	}
}

// FuzzOpus converts arbitrary recordings: an error or a conversion, never a panic, and the packets
// written are in order.
func FuzzOpus(f *testing.F) {
	info := `{"t":"a","c":"opus","s":1,"u":2}`
	head := append([]byte("MJR00002"), 0, byte(len(info)))
	head = append(head, info...)
	for _, seqs := range [][]uint16{{1, 2, 3}, {3, 1, 2, 2}, {65535, 0, 1}, {1, 40, 2}} {
		file := append([]byte{}, head...)
		for _, s := range seqs {
			b, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: s, Timestamp: 960 * uint32(s), SSRC: 5},
				Payload: []byte{0xf8 | byte(s&3), 0xff, 0xfe}}).Marshal()
			file = append(file, "MEET\x00\x00\x00\x00"...)
			file = binary.BigEndian.AppendUint16(file, uint16(len(b)))
			file = append(file, b...)
		}
		f.Add(file)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := record.NewMJRReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		var w collect
		st, err := Opus(r, &w)
		if err != nil {
			return
		}
		if st.Packets+st.Silence != len(w.seqs) {
			t.Fatalf("stats %+v, %d packets written", st, len(w.seqs))
		}
	})
}
