package audio

import (
	"testing"
)

// party is one participant of a test room: it sends a tone as 48 kHz Opus (as a browser does),
// through its jitter buffer into the mix, and decodes what the room sends it.
type party struct {
	freq   float64
	talks  bool
	src    Source
	up     *Encoder
	upPCM  []int16
	phase  int
	seq    uint16
	held   []byte // a packet held back to arrive after its successor
	heldSq uint16
	in     *Input
	lis    *Listener
	down   *Decoder
	pcm    []int16
	heard  []int16
}

type room struct {
	f       Format
	mix     *Mixer
	plan    *Plan
	parties []*party
	srcs    []Source
	ls      []*Listener
	reorder bool
	lossMod uint16 // drop every lossMod-th packet (0: none)
}

var upFormat = Format{Rate: 48000, Channels: 1}

func newRoom(t testing.TB, f Format, down EncoderConfig, freqs ...float64) *room {
	t.Helper()
	r := &room{f: f}
	var err error
	if r.mix, err = NewMixer(f); err != nil {
		t.Fatal(err)
	}
	if r.plan, err = NewPlan(f, -1); err != nil {
		t.Fatal(err)
	}
	for _, fr := range freqs {
		p := &party{freq: fr, talks: fr > 0, src: Source{Channels: 1, Volume: 100, Pan: 50}}
		p.up, err = NewEncoder(upFormat, EncoderConfig{FEC: true, ExpectedLoss: 10})
		if err != nil {
			t.Fatal(err)
		}
		p.upPCM = make([]int16, upFormat.FrameLen())
		if p.in, err = NewInput(Format{Rate: f.Rate, Channels: 1}, DefaultPrebuffer); err != nil {
			t.Fatal(err)
		}
		if p.lis, err = NewListener(f, down); err != nil {
			t.Fatal(err)
		}
		if p.down, err = NewDecoder(f); err != nil {
			t.Fatal(err)
		}
		p.pcm = make([]int16, f.FrameLen())
		r.parties = append(r.parties, p)
		r.ls = append(r.ls, p.lis)
	}
	r.srcs = make([]Source, len(r.parties))
	return r
}

// send encodes the party's next frame and hands it to its input, reordered or lost as the room says.
func (r *room) send(t testing.TB, p *party) {
	p.phase = Tone(p.upPCM, 1, upFormat.Rate, p.freq, 8000, p.phase)
	buf := make([]byte, MaxPacket)
	n, err := p.up.Encode(p.upPCM, buf)
	if err != nil {
		t.Fatal(err)
	}
	seq, ts := p.seq, uint32(p.seq)*960
	p.seq++
	if r.lossMod != 0 && seq%r.lossMod == 0 {
		return
	}
	if r.reorder && p.held == nil {
		p.held, p.heldSq = buf[:n], seq
		return
	}
	p.in.Push(seq, ts, buf[:n])
	if p.held != nil {
		p.in.Push(p.heldSq, uint32(p.heldSq)*960, p.held)
		p.held = nil
	}
}

// run ticks the room, keeping what every party decodes after warm ticks.
func (r *room) run(t testing.TB, ticks, warm int) {
	t.Helper()
	for tick := 0; tick < ticks; tick++ {
		for i, p := range r.parties {
			if p.talks {
				r.send(t, p)
			}
			r.srcs[i] = p.src
			r.srcs[i].PCM = p.in.Next()
		}
		if err := r.mix.Mix(r.srcs); err != nil {
			t.Fatal(err)
		}
		if err := r.plan.Encode(r.mix, r.ls); err != nil {
			t.Fatal(err)
		}
		for _, p := range r.parties {
			if err := p.down.Decode(p.lis.Packet(), p.pcm); err != nil {
				t.Fatalf("tick %d: %v", tick, err)
			}
			if tick >= warm {
				p.heard = append(p.heard, p.pcm...)
			}
		}
	}
}

func (r *room) level(p *party, channel int, freq float64) float64 {
	return ToneLevel(p.heard, r.f.Channels, channel, r.f.Rate, freq)
}

// Every talker hears the others' tones and not its own; silent listeners hear all of them, from one
// shared encoding. Packets arrive reordered and some are lost (recovered by FEC).
func TestPipelineEachHearsTheOthersNotItself(t *testing.T) {
	r := newRoom(t, Format{Rate: 16000, Channels: 1}, EncoderConfig{}, 440, 770, 1180, 0, 0)
	r.reorder, r.lossMod = true, 13
	r.run(t, 80, 25)
	for i, p := range r.parties {
		for j, q := range r.parties {
			if !q.talks {
				continue
			}
			l := r.level(p, 0, q.freq)
			if i == j && l > 0.01 {
				t.Errorf("party %d hears its own %v Hz at %.4f", i, q.freq, l)
			}
			if i != j && l < 0.1 {
				t.Errorf("party %d hears party %d's %v Hz at only %.4f", i, j, q.freq, l)
			}
		}
	}
	if n := r.plan.Encodings(); n != 4 {
		t.Errorf("%d encodings per tick, want 3 talkers + 1 shared", n)
	}
	if &r.parties[3].lis.Packet()[0] != &r.parties[4].lis.Packet()[0] {
		t.Error("the two silent listeners do not share one packet")
	}
	st := r.parties[0].in.Stats()
	if st.FEC == 0 || st.Jitter.Lost == 0 || st.Jitter.Late != 0 {
		t.Errorf("input stats %+v: want FEC recoveries, no late packets", st)
	}
}

func TestPipelineMuteRemovesATone(t *testing.T) {
	r := newRoom(t, Format{Rate: 16000, Channels: 1}, EncoderConfig{}, 440, 770, 0)
	r.parties[0].src.Muted = true
	r.run(t, 60, 20)
	listener := r.parties[2]
	if l := r.level(listener, 0, 440); l > 0.01 {
		t.Errorf("muted tone heard at %.4f", l)
	}
	if l := r.level(listener, 0, 770); l < 0.1 {
		t.Errorf("unmuted tone heard at only %.4f", l)
	}
}

func TestPipelineVolumeScalesATone(t *testing.T) {
	levels := map[int]float64{}
	for _, vol := range []int{100, 50, 200} {
		r := newRoom(t, Format{Rate: 16000, Channels: 1}, EncoderConfig{}, 440, 0)
		r.parties[0].src.Volume = vol
		r.run(t, 60, 20)
		levels[vol] = r.level(r.parties[1], 0, 440)
	}
	for _, vol := range []int{50, 200} {
		ratio := levels[vol] / levels[100]
		want := float64(vol) / 100
		if ratio < want*0.85 || ratio > want*1.15 {
			t.Errorf("volume %d%%: level ratio %.3f, want %.2f ±15%%", vol, ratio, want)
		}
	}
}

func TestPipelineSpatialPositionPans(t *testing.T) {
	r := newRoom(t, Format{Rate: 16000, Channels: 2}, EncoderConfig{Bitrate: 64000}, 440, 1180, 0)
	r.parties[0].src.Pan = 0   // left
	r.parties[1].src.Pan = 100 // right
	r.run(t, 60, 20)
	listener := r.parties[2]
	if l, rr := r.level(listener, 0, 440), r.level(listener, 1, 440); l < 4*rr || l < 0.05 {
		t.Errorf("left source: L %.4f R %.4f", l, rr)
	}
	if l, rr := r.level(listener, 0, 1180), r.level(listener, 1, 1180); rr < 4*l || rr < 0.05 {
		t.Errorf("right source: L %.4f R %.4f", l, rr)
	}
	// The right source hears the left one on the left only.
	if l, rr := r.level(r.parties[1], 0, 440), r.level(r.parties[1], 1, 440); l < 4*rr {
		t.Errorf("right source hears left source at L %.4f R %.4f", l, rr)
	}
}
