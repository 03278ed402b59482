package audiobridge

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
)

// tickRig is a room of n members with a mix output each but no PeerConnection, whose mixer is
// ticked by hand; talkers send a tone, the others a browser's quiet room (noise at -70 dBov).
type tickRig struct {
	loop    *mixLoop
	members []*member
	frames  [][]byte // per member, its one Opus frame, sent every tick
	seq     uint16
}

func newTickRig(tb testing.TB, n, talkers int, gate float64) *tickRig {
	tb.Helper()
	cfg := config.Default().Plugins.AudioBridge
	cfg.SilenceGate = gate
	p := New(cfg, record.SessionOptions{}, nil)
	r := p.rooms[1234]
	loop, err := newMixLoop(r)
	if err != nil {
		tb.Fatal(err)
	}
	rig := &tickRig{loop: loop}
	f := audio.Format{Rate: 16000, Channels: 1}
	enc, err := audio.NewEncoder(f, audio.EncoderConfig{Bitrate: 32000})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pcm, buf := make([]int16, f.FrameLen()), make([]byte, audio.MaxPacket)
	ro := &roster{}
	for i := range n {
		set, _ := (&Join{}).NewParticipant(&r.opts)
		m, rerr := newMember(&session{p: p}, r, uint64(i+1), set, nil)
		if rerr != nil {
			tb.Fatal(rerr)
		}
		m.out.Store(newMixOut(media.CodecOpus, 111, nil))
		if i < talkers {
			audio.Tone(pcm, 1, f.Rate, 300+100*float64(i), 3000, 0)
		} else {
			for k := range pcm {
				pcm[k] = int16(rng.IntN(21) - 10)
			}
		}
		k, err := enc.Encode(pcm, buf)
		if err != nil {
			tb.Fatal(err)
		}
		rig.frames = append(rig.frames, append([]byte(nil), buf[:k]...))
		rig.members = append(rig.members, m)
		ro.members = append(ro.members, m)
	}
	r.roster.Store(ro)
	return rig
}

// tick feeds every member one frame and mixes one period.
func (r *tickRig) tick(t uint64) {
	r.seq++
	for i, m := range r.members {
		m.in.Push(r.seq, uint32(r.seq)*960, r.frames[i])
	}
	r.loop.tick(t)
}

// With the silence gate, a room of 30 where 3 talk encodes 4 times a tick (one shared full mix,
// one mix-minus-self per talker); without it, once per participant, as Janus does.
func TestSilentParticipantsShareOneEncoding(t *testing.T) {
	for _, tc := range []struct {
		gate float64
		want uint64
	}{{-50, 4}, {0, 30}} {
		rig := newTickRig(t, 30, 3, tc.gate)
		for k := uint64(1); k <= 40; k++ { // past prebuffering and the plan's hangover
			rig.tick(k)
		}
		before := rig.loop.stats.encodings.Load()
		for k := uint64(41); k <= 50; k++ {
			rig.tick(k)
		}
		if got := (rig.loop.stats.encodings.Load() - before) / 10; got != tc.want {
			t.Errorf("gate %v dBov: %d encodings per tick, want %d", tc.gate, got, tc.want)
		}
	}
}

// BenchmarkTick100 is one mixing period of a 16 kHz room of 100 participants, 3 of them talking:
// decoding 100 frames, mixing, encoding and handing each participant its packet. Compare
// BenchmarkTick100NoGate: every participant contributes and gets its own encoding, as in Janus.
func BenchmarkTick100(b *testing.B)       { benchTick(b, -50) }
func BenchmarkTick100NoGate(b *testing.B) { benchTick(b, 0) }

func benchTick(b *testing.B, gate float64) {
	rig := newTickRig(b, 100, 3, gate)
	for k := uint64(1); k <= 40; k++ {
		rig.tick(k)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := uint64(41); k < uint64(41+b.N); k++ {
		rig.tick(k)
	}
}
