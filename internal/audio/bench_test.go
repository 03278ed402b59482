package audio

import (
	"testing"
)

// benchRoom is the load: 100 participants in a 16 kHz room (Janus's default rate), 5 of
// them talking, each talker's uplink pre-encoded as 48 kHz Opus.
type benchRoom struct {
	f      Format
	ins    []*Input
	pkts   [][][]byte // pkts[i]: talker i's packets, replayed in a loop
	seq    uint16
	srcs   []Source
	ls     []*Listener
	m      *Mixer
	p      *Plan
	talker func(i int) bool
}

const benchParticipants, benchTalkers = 100, 5

func newBenchRoom(b testing.TB) *benchRoom {
	f := Format{Rate: 16000, Channels: 1}
	r := &benchRoom{f: f, srcs: make([]Source, benchParticipants)}
	r.talker = func(i int) bool { return i%(benchParticipants/benchTalkers) == 0 }
	r.m, _ = NewMixer(f)
	r.p, _ = NewPlan(f, -1)
	for i := 0; i < benchParticipants; i++ {
		in, err := NewInput(Format{Rate: f.Rate, Channels: 1}, 1)
		if err != nil {
			b.Fatal(err)
		}
		r.ins = append(r.ins, in)
		var pk [][]byte
		if r.talker(i) {
			pk = toneFrames(b, upFormat, EncoderConfig{}, 300+float64(i)*10, 50)
		}
		r.pkts = append(r.pkts, pk)
		l, err := NewListener(f, EncoderConfig{})
		if err != nil {
			b.Fatal(err)
		}
		r.ls = append(r.ls, l)
		r.srcs[i] = Source{Channels: 1, Volume: 100, Pan: 50}
	}
	return r
}

// tick runs one mixer period: talkers' packets arrive, every input is pulled and decoded, the room
// is mixed and encoded for every listener.
func (r *benchRoom) tick(b testing.TB) {
	for i, in := range r.ins {
		if pk := r.pkts[i]; pk != nil {
			in.Push(r.seq, uint32(r.seq)*960, pk[int(r.seq)%len(pk)])
		}
		r.srcs[i].PCM = in.Next()
	}
	r.seq++
	if err := r.m.Mix(r.srcs); err != nil {
		b.Fatal(err)
	}
	if err := r.p.Encode(r.m, r.ls); err != nil {
		b.Fatal(err)
	}
}

func (r *benchRoom) warm(b testing.TB) {
	for i := 0; i < 20; i++ {
		r.tick(b)
	}
}

// A steady tick allocates nothing: no garbage per packet or per frame in the mixer loop.
func TestTickAllocatesNothing(t *testing.T) {
	r := newBenchRoom(t)
	r.warm(t)
	if n := testing.AllocsPerRun(50, func() { r.tick(t) }); n != 0 {
		t.Fatalf("%.1f allocations per tick", n)
	}
	if got := r.p.Encodings(); got != benchTalkers+1 {
		t.Fatalf("%d encodings per tick, want %d talkers + 1 shared", got, benchTalkers)
	}
}

// BenchmarkMix100 mixes the full mix and five mix-minus-selfs of 100 participants.
func BenchmarkMix100(b *testing.B) {
	r := newBenchRoom(b)
	r.warm(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := r.m.Mix(r.srcs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeShared encodes one tick for 100 listeners the strata way: 5 talkers' own streams
// and one shared encoding of the full mix.
func BenchmarkEncodeShared(b *testing.B) {
	r := newBenchRoom(b)
	r.warm(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := r.p.Encode(r.m, r.ls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.p.Encodings()), "encodings/tick")
}

// BenchmarkEncodePerListener encodes the same tick the Janus way: one encoding per listener.
func BenchmarkEncodePerListener(b *testing.B) {
	r := newBenchRoom(b)
	r.warm(b)
	buf := make([]byte, MaxPacket)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i, l := range r.ls {
			if _, err := l.own.Encode(r.m.MinusSelf(i), buf); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(r.ls)), "encodings/tick")
}

// BenchmarkTick100 is a whole mixer period: 100 inputs pulled (5 decoded), mixed and encoded.
func BenchmarkTick100(b *testing.B) {
	r := newBenchRoom(b)
	r.warm(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.tick(b)
	}
}

// BenchmarkNewParticipant is what one participant costs in memory (B/op) in a 16 kHz mono room:
// its input (jitter buffer and decoder) and its listener (own encoder and packet buffer).
func BenchmarkNewParticipant(b *testing.B) {
	f := Format{Rate: 16000, Channels: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewInput(f, DefaultPrebuffer); err != nil {
			b.Fatal(err)
		}
		if _, err := NewListener(f, EncoderConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}
