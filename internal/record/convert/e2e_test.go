package convert

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/record/playable"
	"github.com/strata-rtc/strata/internal/sfu"
)

// recording is what record10s made: the .mjr files and the live playable file.
type recording struct {
	audio, video, live string
	st                 record.SessionStats
}

// record10s records 10 s of the video codec c and Opus, as a publisher sends them, through a
// Session whose sinks sit on real receivers; video starts videoLate after audio. mangle, when not
// nil, changes what the network delivers.
func record10s(t *testing.T, c media.Codec, videoLate time.Duration, mangle func(v, a []sent) ([]sent, []sent)) recording {
	t.Helper()
	vpkts := videoPackets(t, c, videoClip(t, c), videoLate)
	apkts := opusPackets(t, opusClip(t), 0)
	if mangle != nil {
		vpkts, apkts = mangle(vpkts, apkts)
	}
	jitter(vpkts, 1)
	jitter(apkts, 2)
	dir := t.TempDir()
	s, err := record.NewSession(dir, "rec", record.SessionOptions{Playable: true})
	if err != nil {
		t.Fatal(err)
	}
	// Rings large enough for the whole clip: the test sends faster than real time.
	at, err := s.AddTrack(media.CodecOpus, "minptime=10;useinbandfec=1", record.WithSlots(1<<10))
	if err != nil {
		t.Fatal(err)
	}
	vt, err := s.AddTrack(c, "", record.WithSlots(1<<14))
	if err != nil {
		t.Fatal(err)
	}
	arecv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "a", Codec: media.CodecOpus}, nil)
	vrecv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "v", Codec: c}, nil)
	arecv.AddSink(at)
	vrecv.AddSink(vt)
	base := sfu.Now()
	for len(apkts) > 0 || len(vpkts) > 0 {
		if len(vpkts) == 0 || len(apkts) > 0 && apkts[0].at <= vpkts[0].at {
			arecv.WriteRTP(0, apkts[0].b, base+apkts[0].at)
			apkts = apkts[1:]
		} else {
			vrecv.WriteRTP(0, vpkts[0].b, base+vpkts[0].at)
			vpkts = vpkts[1:]
		}
	}
	arecv.RemoveSink(at)
	vrecv.RemoveSink(vt)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := recording{audio: at.MJR().Path(), video: vt.MJR().Path(), st: s.Stats(), live: s.Stats().Path}
	t.Logf("session: %+v", r.st)
	if r.st.Dropped != 0 || r.st.MJR[0].Dropped != 0 || r.st.MJR[1].Dropped != 0 {
		t.Fatalf("dropped packets: %+v", r.st)
	}
	return r
}

// probe is what ffprobe says of a file's streams.
type probe struct {
	duration float64
	start    map[string]float64 // by codec type: audio, video
	codecs   map[string]string
}

func probeFile(t *testing.T, path string) probe {
	t.Helper()
	out := tool(t, "ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,start_time:format=duration",
		"-of", "compact=p=0:nk=0", path)
	p := probe{start: map[string]float64{}, codecs: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		kv := map[string]string{}
		for _, f := range strings.Split(line, "|") {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		if d, ok := kv["duration"]; ok {
			p.duration, _ = strconv.ParseFloat(d, 64)
		}
		if typ := kv["codec_type"]; typ != "" {
			p.codecs[typ] = kv["codec_name"]
			p.start[typ], _ = strconv.ParseFloat(kv["start_time"], 64)
		}
	}
	return p
}

// checkPlayable checks a file holds the codecs, lasts want (± 0.5 s), decodes without an error, and
// that its video starts videoLate after its audio (± 0.1 s).
func checkPlayable(t *testing.T, path string, want float64, videoLate time.Duration, codecs ...string) {
	t.Helper()
	p := probeFile(t, path)
	t.Logf("%s: %+v", filepath.Base(path), p)
	var have []string
	for _, c := range p.codecs {
		have = append(have, c)
	}
	sort.Strings(have)
	sort.Strings(codecs)
	if fmt.Sprint(have) != fmt.Sprint(codecs) {
		t.Fatalf("%s holds %v, want %v", path, have, codecs)
	}
	if math.Abs(p.duration-want) > 0.5 {
		t.Fatalf("%s lasts %.3f s, want %.1f ± 0.5", path, p.duration, want)
	}
	if len(codecs) == 2 {
		// The second video frame (an MP4 file shows the first one from the start) against the
		// first audio frame.
		a, v := packetTimes(t, path, "a", 1), packetTimes(t, path, "v", 2)
		off := v[1] - 1.0/clipFPS - a[0]
		t.Logf("%s: video starts %.3f s after audio (sent %.3f s)", filepath.Base(path), off, videoLate.Seconds())
		if math.Abs(off-videoLate.Seconds()) > 0.1 {
			t.Fatalf("%s: video starts %.3f s after audio, want %.3f ± 0.1", path, off, videoLate.Seconds())
		}
	}
	if errs := tool(t, "ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"); errs != "" {
		t.Fatalf("ffmpeg decoding %s: %s", path, errs)
	}
}

// testCodec records 10 s of c and Opus, and checks the live file, strata's conversion of the .mjr
// files, and janus-pp-rec's.
func testCodec(t *testing.T, c media.Codec, ext, ppExt, name string) {
	t.Parallel()
	const late = 300 * time.Millisecond
	r := record10s(t, c, late, nil)
	if !strings.HasSuffix(r.live, ext) {
		t.Fatalf("live file %q, want a %s", r.live, ext)
	}
	if k := os.Getenv("KEEP"); k != "" {
		copyFile(t, r.live, filepath.Join(k, filepath.Base(r.live)))
	}
	checkPlayable(t, r.live, clipSecs+late.Seconds(), late, name, "opus")
	out := filepath.Join(t.TempDir(), "converted"+ext)
	st, err := File(out, r.audio, r.video)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("strata rec convert:\n%s", st.Summary(out))
	checkPlayable(t, out, clipSecs+late.Seconds(), late, name, "opus")
	v := st.Tracks[1]
	if v.Frames != clipSecs*clipFPS || v.Skipped != 0 || v.Gaps != 0 || st.Tracks[0].Silence != 0 {
		t.Fatalf("video track %+v, want %d frames, none skipped", v, clipSecs*clipFPS)
	}
	if c == media.CodecVP9 || c == media.CodecAV1 { // which MP4 holds too
		mp4 := filepath.Join(t.TempDir(), "converted.mp4")
		if _, err := File(mp4, r.audio, r.video); err != nil {
			t.Fatal(err)
		}
		checkPlayable(t, mp4, clipSecs+late.Seconds(), late, name, "opus")
	}
	// janus-pp-rec converts each recording on its own.
	ppv := filepath.Join(t.TempDir(), "pp"+ppExt)
	tool(t, "janus-pp-rec", r.video, ppv)
	checkPlayable(t, ppv, clipSecs, 0, name)
	ppa := filepath.Join(t.TempDir(), "pp.opus")
	tool(t, "janus-pp-rec", r.audio, ppa)
	checkPlayable(t, ppa, clipSecs, 0, "opus")
}

func TestVP8AndOpusPlayable(t *testing.T)  { testCodec(t, media.CodecVP8, ".webm", ".webm", "vp8") }
func TestVP9AndOpusPlayable(t *testing.T)  { testCodec(t, media.CodecVP9, ".webm", ".webm", "vp9") }
func TestH264AndOpusPlayable(t *testing.T) { testCodec(t, media.CodecH264, ".mp4", ".mp4", "h264") }
func TestAV1AndOpusPlayable(t *testing.T)  { testCodec(t, media.CodecAV1, ".webm", ".mp4", "av1") }

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// packetTimes are the times of a file's first n packets of a stream ("a" or "v").
func packetTimes(t *testing.T, path, stream string, n int) []float64 {
	t.Helper()
	out := tool(t, "ffprobe", "-v", "error", "-select_streams", stream, "-read_intervals", fmt.Sprintf("%%+#%d", n),
		"-show_entries", "packet=pts_time", "-of", "csv=p=0", path)
	var ts []float64
	for _, f := range strings.Fields(out) {
		v, err := strconv.ParseFloat(strings.TrimSuffix(f, ","), 64)
		if err != nil {
			t.Fatalf("ffprobe packet time %q: %v", f, err)
		}
		ts = append(ts, v)
	}
	if len(ts) < n {
		t.Fatalf("%s: %d packets of stream %s", path, len(ts), stream)
	}
	return ts
}

// Lost packets and packets out of order, through the live recorder and the conversion: the video
// waits for the next keyframe after a loss (no decode errors), the lost audio becomes silence, the
// packets out of order are put back.
func TestLossAndReordering(t *testing.T) {
	t.Parallel()
	lostAudio := 0
	mangle := func(v, a []sent) ([]sent, []sent) {
		k := 0
		for v[k].at < 1300*time.Millisecond {
			k++
		}
		v = append(v[:k:k], v[k+3:]...) // three packets at 1.3 s
		for i := 1; i+1 < len(v); i += 37 {
			v[i].b, v[i+1].b = v[i+1].b, v[i].b // arrive swapped
		}
		lostAudio = 10
		a = append(a[:200:200], a[210:]...) // 4.0-4.2 s
		for i := 1; i+1 < len(a); i += 23 {
			a[i].b, a[i+1].b = a[i+1].b, a[i].b
		}
		return v, a
	}
	r := record10s(t, media.CodecVP8, 0, mangle)
	out := filepath.Join(t.TempDir(), "converted.webm")
	st, err := File(out, r.audio, r.video)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("strata rec convert:\n%s", st.Summary(out))
	for _, got := range []playable.Stats{r.st.Playable, st.Stats} {
		a, v := got.Tracks[0], got.Tracks[1]
		if a.Silence != lostAudio || a.Dropped != 0 || a.Gaps != 1 {
			t.Fatalf("audio %+v: want %d silence frames for the loss, one gap, nothing dropped", a, lostAudio)
		}
		// The loss is at 1.3 s, the next keyframe at 2 s; the three packets lost may be whole frames.
		if v.Gaps != 1 || v.KeyframeWaits != 2 || v.Skipped < 15 || v.Skipped > 25 || v.Frames+v.Skipped < clipSecs*clipFPS-3 {
			t.Fatalf("video %+v: want one gap, a wait for the keyframe at 2 s", v)
		}
	}
	checkPlayable(t, r.live, clipSecs, 0, "vp8", "opus")
	checkPlayable(t, out, clipSecs, 0, "vp8", "opus")
}

// The sample recording Janus ships (janus-demos: a VP8 and an Opus .mjr, made by Janus's recorder)
// becomes one WebM file as long as janus-pp-rec's conversion of its video, decoding without errors.
func TestJanusSampleRecording(t *testing.T) {
	t.Parallel()
	const dir = "/usr/share/janus/recordings"
	audio, video := filepath.Join(dir, "rec-sample-audio.mjr"), filepath.Join(dir, "rec-sample-video.mjr")
	if _, err := os.Stat(video); err != nil {
		t.Fatalf("Janus's sample recording is needed (scripts/install-deps.sh test installs janus-demos): %v", err)
	}
	out := filepath.Join(t.TempDir(), "sample.webm")
	st, err := File(out, audio, video)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", st.Summary(out))
	pp := filepath.Join(t.TempDir(), "pp.webm")
	tool(t, "janus-pp-rec", video, pp)
	checkPlayable(t, out, probeFile(t, pp).duration, 0, "vp8", "opus")
	if v := st.Tracks[1]; v.Dropped != 0 || v.Skipped != 0 || st.Tracks[0].Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// jitter delays each packet by 5 to 45 ms, as a network does: some arrive out of order.
func jitter(pkts []sent, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 14))
	for i := range pkts {
		pkts[i].at += 5*time.Millisecond + time.Duration(r.Int64N(int64(40*time.Millisecond)))
	}
	sort.SliceStable(pkts, func(i, j int) bool { return pkts[i].at < pkts[j].at })
}
