package record

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// These tests check recordings with Janus's own post-processor, janus-pp-rec (Debian's
// janus-tools, 1.1.2), and what it produces with ffmpeg: a recording is right when Janus's tools
// read it whole and the media decodes to what was sent.

const audioLevelURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"

var countedRE = regexp.MustCompile(`Counted (\d+) RTP packets`)

// ppCounted is how many packets janus-pp-rec read from a recording (and converted to out).
func ppCounted(t *testing.T, path, out string) int {
	t.Helper()
	log := tool(t, "janus-pp-rec", path, out)
	t.Logf("janus-pp-rec %s %s:\n%s", filepath.Base(path), filepath.Base(out), log)
	m := countedRE.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("janus-pp-rec did not count packets:\n%s", log)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// ppFrame is what janus-pp-rec's debug log says of one frame of a recording.
type ppFrame struct {
	ms       int // the frame's time since the first packet
	ssrc     uint32
	seq      uint16
	ts       uint32
	hasLevel bool // the packet kept its header extension
}

var (
	frameTimeRE = regexp.MustCompile(`-- Time: (\d+)ms`)
	frameRTPRE  = regexp.MustCompile(`-- RTP packet \(ssrc=(\d+), pt=\d+, ext=(\d), seq=(\d+), ts=(\d+)\)`)
)

// ppFrames lists the frames of a recording in file order, as janus-pp-rec parses them (-p: parse
// only; -d 5: log each frame).
func ppFrames(t *testing.T, path string) []ppFrame {
	t.Helper()
	log := tool(t, "janus-pp-rec", "-p", "-d", "5", path)
	times, rtps := frameTimeRE.FindAllStringSubmatch(log, -1), frameRTPRE.FindAllStringSubmatch(log, -1)
	if len(times) != len(rtps) {
		t.Fatalf("janus-pp-rec logged %d frame times and %d RTP headers", len(times), len(rtps))
	}
	num := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 32); return n }
	frames := make([]ppFrame, len(times))
	for i := range frames {
		frames[i] = ppFrame{ms: int(num(times[i][1])), ssrc: uint32(num(rtps[i][1])), hasLevel: rtps[i][2] == "1",
			seq: uint16(num(rtps[i][3])), ts: uint32(num(rtps[i][4]))}
	}
	return frames
}

// ppHeader checks janus-pp-rec's reading of the header and returns the JSON it prints.
func ppHeader(t *testing.T, path, kind, codec string) mjrInfo {
	t.Helper()
	log := tool(t, "janus-pp-rec", "--header", path)
	t.Logf("janus-pp-rec --header:\n%s", log)
	for _, want := range []string{"This is " + kind + " recording:", "-- Codec:   " + codec} {
		if !strings.Contains(log, want) {
			t.Fatalf("janus-pp-rec --header does not say %q:\n%s", want, log)
		}
	}
	js := strings.TrimSpace(tool(t, "janus-pp-rec", "--json", "-d", "0", path))
	t.Logf("janus-pp-rec --json: %s", js)
	var info mjrInfo
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatalf("janus-pp-rec --json printed %q: %v", js, err)
	}
	return info
}

// checkTone checks that pcm (mono, at rate) holds freq from start to end seconds.
func checkTone(t *testing.T, pcm []int16, rate int, freq, from, to float64) {
	t.Helper()
	seg := pcm[int(from*float64(rate)):int(to*float64(rate))]
	on, off := audio.ToneLevel(seg, 1, 0, rate, freq), audio.ToneLevel(seg, 1, 0, rate, freq*1.5)
	t.Logf("%.1f-%.1f s: %.0f Hz level %.3f, %.0f Hz %.3f", from, to, freq, on, freq*1.5, off)
	if on < 0.25 || off > 0.02 {
		t.Fatalf("%.1f-%.1f s: the %.0f Hz tone is at %.3f (want ≥ 0.25, sent 0.37), %.0f Hz at %.3f (want < 0.02)",
			from, to, freq, on, freq*1.5, off)
	}
}

func checkDuration(t *testing.T, pcm []int16, rate int, want float64) {
	t.Helper()
	got := float64(len(pcm)) / float64(rate)
	t.Logf("decoded %.3f s", got)
	if math.Abs(got-want) > 0.045 {
		t.Fatalf("decoded %.3f s, want %.3f", got, want)
	}
}

// An Opus track recorded from a real Receiver is read whole by janus-pp-rec, whose .opus file
// decodes to the tone and the length that were sent; the info header is Janus's, with the
// extension map given. The stream's sequence numbers and timestamps wrap during the recording.
func TestOpusRecordingPlaysBackThroughJanusPPRec(t *testing.T) {
	r := newRecorded(t, media.CodecOpus, WithExtension(1, audioLevelURI))
	s := &stream{pt: 111, ssrc: 0x1234, seq: 65500, ts: math.MaxUint32 - 20*960, step: 960}
	var pkts [][]byte
	for _, p := range opusTone(t, 440, 3) {
		pkts = append(pkts, s.packet(t, p, false))
	}
	r.play(pkts, 0, 20*time.Millisecond)
	r.close(t)
	st := r.mjr.Stats()
	if st.Packets != 150 || st.Dropped != 0 {
		t.Fatalf("stats %+v, want 150 packets written, none dropped", st)
	}

	// Every frame as sent, at its time since the first, its header extension kept.
	frames := ppFrames(t, r.path)
	if len(frames) != 150 {
		t.Fatalf("janus-pp-rec parsed %d frames, want 150", len(frames))
	}
	for i, f := range frames {
		want := ppFrame{ms: 20 * i, ssrc: 0x1234, seq: uint16(65500 + i), ts: math.MaxUint32 - 20*960 + uint32(i)*960, hasLevel: true}
		if f != want {
			t.Fatalf("frame %d is %+v, want %+v", i, f, want)
		}
	}
	info := ppHeader(t, r.path, "an audio", "opus")
	if info.Type != "a" || info.Codec != "opus" || info.Extensions["1"] != audioLevelURI {
		t.Fatalf("info header %+v", info)
	}
	if info.FirstPacket < info.Created || info.FirstPacket-info.Created > int64(time.Minute/time.Microsecond) {
		t.Fatalf("created %d µs, first packet %d µs", info.Created, info.FirstPacket)
	}
	out := filepath.Join(t.TempDir(), "out.opus")
	if n := ppCounted(t, r.path, out); n != 150 {
		t.Fatalf("janus-pp-rec counted %d packets, want 150", n)
	}
	pcm := decodePCM(t, out, 48000)
	checkDuration(t, pcm, 48000, 3)
	checkTone(t, pcm, 48000, 440, 0.5, 2.5)
}

// G.711 recordings become .wav files that hold the tone, for both laws.
func TestG711RecordingPlaysBackAsWav(t *testing.T) {
	for _, tc := range []struct {
		codec media.Codec
		law   audio.Law
		pt    uint8
	}{{media.CodecPCMU, audio.ULaw, 0}, {media.CodecPCMA, audio.ALaw, 8}} {
		t.Run(tc.codec.String(), func(t *testing.T) {
			f := audio.Format{Rate: 8000, Channels: 1}
			enc, err := audio.NewG711Encoder(f, tc.law)
			if err != nil {
				t.Fatal(err)
			}
			r := newRecorded(t, tc.codec)
			s := &stream{pt: tc.pt, ssrc: 77, seq: 1, ts: 123456, step: audio.G711Samples}
			var pkts [][]byte
			for _, p := range toneFrames(t, f, 440, 2, enc.Encode) {
				pkts = append(pkts, s.packet(t, p, false))
			}
			r.play(pkts, 0, 20*time.Millisecond)
			r.close(t)
			ppHeader(t, r.path, "an audio", tc.codec.String())
			out := filepath.Join(t.TempDir(), "out.wav")
			if n := ppCounted(t, r.path, out); n != 100 {
				t.Fatalf("janus-pp-rec counted %d packets, want 100", n)
			}
			pcm := decodePCM(t, out, 8000)
			checkDuration(t, pcm, 8000, 2)
			checkTone(t, pcm, 8000, 440, 0.25, 1.75)
		})
	}
}

// A stream muted for a second and resumed with another SSRC and unrelated numbering (a publisher
// that renegotiated) stays one recording: janus-pp-rec keeps every packet (it drops those whose
// SSRC is not the first's, so the recording must not change it), and the pause is a gap of its
// length between the two tones.
func TestResyncAndNewSSRCContinueTheRecording(t *testing.T) {
	r := newRecorded(t, media.CodecOpus)
	first := &stream{pt: 111, ssrc: 1, seq: 100, ts: 1000, step: 960}
	second := &stream{pt: 111, ssrc: 2, seq: 40000, ts: 3_000_000_000, step: 960}
	var a, b [][]byte
	for _, p := range opusTone(t, 440, 1) {
		a = append(a, first.packet(t, p, false))
	}
	for _, p := range opusTone(t, 660, 1) {
		b = append(b, second.packet(t, p, false))
	}
	r.play(a, 0, 20*time.Millisecond)
	r.recv.SetMuted(true)
	r.play(a[:10], time.Second, 20*time.Millisecond) // not delivered while muted
	r.recv.SetMuted(false)
	r.play(b, 2*time.Second, 20*time.Millisecond)
	r.close(t)
	if st := r.mjr.Stats(); st.Packets != 100 || st.Dropped != 0 {
		t.Fatalf("stats %+v, want 100 packets, none dropped", st)
	}
	// The second stream continues the first: the SSRC stays, the sequence numbers follow on, and
	// the timestamp jumps by the 1.02 s between the last packet before the pause and the first
	// after it, as the frame times do.
	frames := ppFrames(t, r.path)
	if len(frames) != 100 {
		t.Fatalf("janus-pp-rec parsed %d frames, want 100", len(frames))
	}
	for i, f := range frames {
		want := ppFrame{ms: 20 * i, ssrc: 1, seq: uint16(100 + i), ts: 1000 + uint32(i)*960, hasLevel: true}
		if i >= 50 {
			want.ms, want.ts = 2000+20*(i-50), 1000+49*960+48960+uint32(i-50)*960
		}
		if f != want {
			t.Fatalf("frame %d is %+v, want %+v", i, f, want)
		}
	}
	out := filepath.Join(t.TempDir(), "out.opus")
	if n := ppCounted(t, r.path, out); n != 100 {
		t.Fatalf("janus-pp-rec counted %d packets, want 100", n)
	}
	pcm := decodePCM(t, out, 48000)
	checkDuration(t, pcm, 48000, 3)
	checkTone(t, pcm, 48000, 440, 0.2, 0.9)
	checkTone(t, pcm, 48000, 660, 2.1, 2.9)
	if gap := audio.ToneLevel(pcm[48000*11/10:48000*19/10], 1, 0, 48000, 440); gap > 0.02 {
		t.Fatalf("the pause holds the first tone at %.3f", gap)
	}
}

// Only the chosen layer of a simulcast receiver is recorded.
func TestRecordsOneLayer(t *testing.T) {
	recv := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecOpus, Simulcast: true}, nil)
	path := filepath.Join(t.TempDir(), "layer.mjr")
	m, err := NewMJR(path, media.CodecOpus, WithLayer(1))
	if err != nil {
		t.Fatal(err)
	}
	recv.AddSink(m)
	l0 := &stream{pt: 111, ssrc: 10, step: 960}
	l1 := &stream{pt: 111, ssrc: 11, step: 960}
	now := sfu.Now()
	for i, p := range opusTone(t, 440, 1) {
		at := now + time.Duration(i)*20*time.Millisecond
		recv.WriteRTP(0, l0.packet(t, p, false), at)
		recv.WriteRTP(1, l1.packet(t, p, false), at)
	}
	recv.RemoveSink(m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := ppCounted(t, path, filepath.Join(t.TempDir(), "out.opus")); n != 50 {
		t.Fatalf("janus-pp-rec counted %d packets, want the 50 of layer 1", n)
	}
}

// Padding-only packets (a sender probing bandwidth on the media stream) are not recorded, and
// the packets after them are renumbered so that janus-pp-rec sees no loss.
func TestPaddingLeavesNoHole(t *testing.T) {
	r := newRecorded(t, media.CodecOpus)
	s := &stream{pt: 111, ssrc: 8, seq: 500, ts: 0, step: 960}
	var pkts [][]byte
	for i, p := range opusTone(t, 440, 0.2) {
		pkts = append(pkts, s.packet(t, p, false))
		if i == 4 {
			pad := rtp.Packet{Header: rtp.Header{Version: 2, Padding: true, PaddingSize: 200, PayloadType: 111,
				SequenceNumber: s.seq, Timestamp: s.ts - s.step, SSRC: s.ssrc}}
			b, err := pad.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			second := append([]byte(nil), b...)
			media.SetSeq(second, s.seq+1)
			pkts = append(pkts, b, second)
			s.seq += 2
		}
	}
	r.play(pkts, 0, 10*time.Millisecond)
	r.close(t)
	frames := ppFrames(t, r.path)
	if len(frames) != 10 || r.mjr.Stats().Packets != 10 {
		t.Fatalf("%d frames (stats %+v), want the 10 with media", len(frames), r.mjr.Stats())
	}
	for i, f := range frames {
		if f.seq != uint16(500+i) {
			t.Fatalf("frame %d has sequence number %d, want %d", i, f.seq, 500+i)
		}
	}
}
