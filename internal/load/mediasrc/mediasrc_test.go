package mediasrc

import (
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// recorder is a Writer that measures what it gets with the receive-side statistics, as a
// subscriber would, plus the raw sequence of markers and picture ids.
type recorder struct {
	stats   *rtpstats.Stream
	buf     []byte
	at      *time.Duration
	packets int
	pics    []uint16
}

func newRecorder(kind rtpstats.Kind, clock uint32, at *time.Duration) *recorder {
	return &recorder{stats: rtpstats.New(rtpstats.Config{Kind: kind, ClockRate: clock}, 0), buf: make([]byte, 1500), at: at}
}

func (r *recorder) WriteRTP(p *rtp.Packet) error {
	n, err := p.MarshalTo(r.buf)
	if err != nil {
		return err
	}
	r.packets++
	if len(p.Payload) >= 4 && p.Payload[0]&0x10 != 0 {
		r.pics = append(r.pics, uint16(p.Payload[2]&0x7f)<<8|uint16(p.Payload[3]))
	}
	return r.stats.Observe(r.buf[:n], *r.at)
}

// synthetic builds a clip of n frames with a keyframe every gop frames, each frame size bytes.
func synthetic(n, gop, size int) *VideoClip {
	c := &VideoClip{Interval: time.Second / 30}
	for i := 0; i < n; i++ {
		f := make([]byte, size)
		if i%gop != 0 {
			f[0] = 0x01 // inter frame
		}
		c.addFrame(f)
	}
	return c
}

func syntheticMedia() *Media {
	audio := &AudioClip{Interval: 20 * time.Millisecond}
	for i := 0; i < 50; i++ {
		audio.Packets = append(audio.Packets, make([]byte, 80))
	}
	return &Media{Video: []*VideoClip{synthetic(90, 30, 3000), synthetic(90, 30, 500)}, Audio: audio}
}

// run steps the pacer over d of simulated time, exactly at each due time.
func run(p *Pacer, now *time.Duration, d time.Duration) {
	end := *now + d
	for *now < end {
		next := p.Step(*now)
		*now = next
	}
}

func TestPacerSendsRealTimeMedia(t *testing.T) {
	var now time.Duration
	m := syntheticMedia()
	audio := newRecorder(rtpstats.Audio, 48000, &now)
	hi, lo := newRecorder(rtpstats.Video, 90000, &now), newRecorder(rtpstats.Video, 90000, &now)
	p := NewPacer(m, audio, []Writer{hi, lo}, 0)
	run(p, &now, 2*time.Second-time.Millisecond) // [0, 2 s)
	a := audio.stats.Summarize(now)
	if a.Packets != 100 || a.Lost != 0 || a.JitterMs > 0.1 {
		t.Errorf("audio over 2 s: %+v, want 100 packets at 50/s, no loss, no jitter", a)
	}
	for name, r := range map[string]*recorder{"high": hi, "low": lo} {
		s := r.stats.Summarize(now)
		if s.Frames != 60 || s.Keyframes != 2 || s.Lost != 0 || s.TTFFMs != 0 || s.Freezes != 0 {
			t.Errorf("%s layer over 2 s: %+v, want 60 frames, 2 keyframes, clean", name, s)
		}
		for i := 1; i < len(r.pics); i++ {
			if r.pics[i] != (r.pics[i-1]+1)&0x7fff {
				t.Fatalf("%s layer: picture id %d after %d", name, r.pics[i], r.pics[i-1])
			}
		}
	}
	if hi.packets != 60*3 || lo.packets != 60 {
		t.Errorf("packets: high %d (3000-byte frames, want 3 each), low %d (want 1 each)", hi.packets, lo.packets)
	}
	st := p.Stats()
	if st.Packets != uint64(100+hi.packets+lo.packets) || st.Late != 0 || st.Errors != 0 {
		t.Errorf("pacer stats %+v", st)
	}
}

func TestPacerKeyframeRequestSkipsAheadWithHoldoff(t *testing.T) {
	var now time.Duration
	m := syntheticMedia()
	hi := newRecorder(rtpstats.Video, 90000, &now)
	p := NewPacer(m, nil, []Writer{hi}, 0)
	run(p, &now, 200*time.Millisecond) // 6 frames in, next keyframe would be frame 30
	p.RequestKeyframe(0)
	p.RequestKeyframe(7) // no such layer: ignored
	run(p, &now, 100*time.Millisecond)
	if got := hi.stats.Summarize(now).Keyframes; got != 2 {
		t.Fatalf("keyframes after a request: %d, want 2", got)
	}
	p.RequestKeyframe(0) // within the hold-off: served only once 500 ms have passed
	run(p, &now, 300*time.Millisecond)
	if got := hi.stats.Summarize(now).Keyframes; got != 2 {
		t.Fatalf("keyframes during hold-off: %d, want still 2", got)
	}
	run(p, &now, 300*time.Millisecond)
	if got := hi.stats.Summarize(now).Keyframes; got != 3 {
		t.Fatalf("keyframes after hold-off: %d, want 3", got)
	}
}

func TestPacerSkipsAheadWhenFarBehind(t *testing.T) {
	m := syntheticMedia()
	var now time.Duration
	audio := newRecorder(rtpstats.Audio, 48000, &now)
	p := NewPacer(m, audio, nil, 0)
	p.Step(0)
	now = 3 * time.Second // the generator stalled for 3 s
	p.Step(now)
	if st := p.Stats(); st.Late != 1 || st.Packets > 3 {
		t.Fatalf("after a stall: %+v, want one late skip and no burst", st)
	}
}

func TestPacerStepAllocatesNothing(t *testing.T) {
	m := syntheticMedia()
	var now time.Duration
	p := NewPacer(m, discard{}, []Writer{discard{}, discard{}}, 0)
	allocs := testing.AllocsPerRun(200, func() {
		now = p.Step(now)
	})
	if allocs != 0 {
		t.Fatalf("Step allocates %.1f times", allocs)
	}
}

type discard struct{}

func (discard) WriteRTP(*rtp.Packet) error { return nil }

func TestChunksFitAndCoverFrame(t *testing.T) {
	c := synthetic(1, 1, 5000)
	total := 0
	for _, ch := range c.Frames[0].Chunks {
		if len(ch)+vp8DescriptorLen > MaxPayload {
			t.Fatalf("chunk of %d bytes", len(ch))
		}
		total += len(ch)
	}
	if total != 5000 || len(c.Frames[0].Chunks) != 5 || !c.Frames[0].Key {
		t.Fatalf("5000-byte keyframe in %d chunks totalling %d", len(c.Frames[0].Chunks), total)
	}
	if c := synthetic(90, 30, 10); c.NextKey(31) != 60 || c.NextKey(61) != 0 || c.NextKey(30) != 30 {
		t.Fatalf("NextKey: %d %d %d", c.NextKey(31), c.NextKey(61), c.NextKey(30))
	}
}

// TestGeneratedClips generates (once; later runs reuse the cache) and reads the real clips.
func TestGeneratedClips(t *testing.T) {
	m, err := Load(DefaultDir(), Layers)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Video) != 3 {
		t.Fatalf("%d layers", len(m.Video))
	}
	for i, c := range m.Video {
		if c.Layer.Width != Layers[i].Width || c.Interval != time.Second/30 || !c.Frames[0].Key || len(c.Frames) != clipSeconds*clipFPS {
			t.Errorf("layer %d: %+v, %d frames, interval %v", i, c.Layer, len(c.Frames), c.Interval)
		}
		if k := c.Kbps(); k < 0.5*float64(Layers[i].Kbps) || k > 1.5*float64(Layers[i].Kbps) {
			t.Errorf("layer %s: %.0f kbit/s, encoded for %d", c.Layer.RID, k, Layers[i].Kbps)
		}
	}
	if n := len(m.Audio.Packets); n < 490 || n > 510 {
		t.Errorf("%d Opus packets in 10 s", n)
	}
	if _, err := ReadIVF(AudioFile(DefaultDir())); err == nil {
		t.Error("an Ogg file read as IVF")
	}
}

// counting is an AudioSource of numbered one-byte payloads at levels 0, 1, 2, … (V set on odd).
type counting struct{ n byte }

func (c *counting) Next() ([]byte, byte) {
	c.n++
	b := c.n & 0x7f
	if c.n%2 == 1 {
		b |= 0x80
	}
	return []byte{c.n}[:1:1], b
}

// levelRecorder keeps the payload and audio level of every packet.
type levelRecorder struct {
	id       uint8
	payloads []byte
	levels   []byte
}

func (r *levelRecorder) WriteRTP(p *rtp.Packet) error {
	r.payloads = append(r.payloads, p.Payload[0])
	if e := p.GetExtension(r.id); len(e) == 1 {
		r.levels = append(r.levels, e[0])
	}
	return nil
}

func TestPacerSendsAnAudioSourceWithLevels(t *testing.T) {
	var now time.Duration
	rec := &levelRecorder{id: 3}
	p := NewPacer(&Media{}, rec, nil, 0) // no clip: the source is the audio
	p.SetAudioSource(&counting{}, 3)
	run(p, &now, time.Second-time.Millisecond)
	if len(rec.payloads) != 50 || len(rec.levels) != 50 {
		t.Fatalf("%d payloads, %d levels in 1 s, want 50 each", len(rec.payloads), len(rec.levels))
	}
	for i := range rec.payloads {
		want := byte(i+1) & 0x7f
		if i%2 == 0 {
			want |= 0x80
		}
		if rec.payloads[i] != byte(i+1) || rec.levels[i] != want {
			t.Fatalf("packet %d: payload %d level %#x", i, rec.payloads[i], rec.levels[i])
		}
	}
	// Without a negotiated extension id the frames go without levels.
	bare := &levelRecorder{id: 3}
	q := NewPacer(&Media{}, bare, nil, 0)
	q.SetAudioSource(&counting{}, 0)
	now = 0
	run(q, &now, 100*time.Millisecond)
	if len(bare.payloads) != 5 || len(bare.levels) != 0 {
		t.Fatalf("without an id: %d payloads, %d levels", len(bare.payloads), len(bare.levels))
	}
	src := &constant{}
	r := NewPacer(&Media{}, discard{}, nil, 0)
	r.SetAudioSource(src, 1)
	now = 0
	if n := testing.AllocsPerRun(200, func() { now = r.Step(now) }); n != 0 {
		t.Fatalf("Step with a source allocates %.1f times", n)
	}
}

type constant struct{ b [40]byte }

func (c *constant) Next() ([]byte, byte) { return c.b[:], 0x80 | 20 }
