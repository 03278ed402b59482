package audio

import (
	"math"
	"testing"
)

// snr is the ratio (dB) of ref's energy to the energy of got - ref.
func snr(got, ref []int16) float64 {
	var sig, diff float64
	for k := range ref {
		sig += float64(ref[k]) * float64(ref[k])
		d := float64(got[k]) - float64(ref[k])
		diff += d * d
	}
	return 10 * math.Log10(sig/max(diff, 1))
}

// switchRoom: listener 0 talks a 1 kHz tone on ticks [5, 10) and from tick 50 on; listener 1 talks
// a 440 Hz tone throughout, so the mix always has content; listener 2 stays silent.
type switchRoom struct {
	f         Format
	m         *Mixer
	p         *Plan
	ls        []*Listener
	dec       *Decoder // listener 0's
	janus     *Encoder // listener 0's mix encoded every tick by one encoder, as Janus does
	janusDec  *Decoder
	sharedDec *Decoder // listener 2's: the shared stream, never switched
	a, j, s   []int16  // decoded this tick: listener 0, the Janus reference, the shared stream
	srcs      []Source
	va, vb    []int16
	phA, phB  int
	buf       []byte
}

func newSwitchRoom(t *testing.T, hangover int) *switchRoom {
	f := Format{Rate: 16000, Channels: 1}
	r := &switchRoom{f: f, srcs: make([]Source, 3), buf: make([]byte, MaxPacket)}
	r.m, _ = NewMixer(f)
	r.p, _ = NewPlan(f, hangover)
	for i := 0; i < 3; i++ {
		l, err := NewListener(f, EncoderConfig{})
		if err != nil {
			t.Fatal(err)
		}
		r.ls = append(r.ls, l)
		r.srcs[i] = Source{Channels: 1, Volume: 100}
	}
	r.janus, _ = NewEncoder(f, EncoderConfig{})
	r.dec, _ = NewDecoder(f)
	r.janusDec, _ = NewDecoder(f)
	r.sharedDec, _ = NewDecoder(f)
	for _, b := range []*[]int16{&r.a, &r.j, &r.s, &r.va, &r.vb} {
		*b = make([]int16, f.FrameLen())
	}
	return r
}

func (r *switchRoom) tick(t *testing.T, tick int) {
	r.phA = Tone(r.va, 1, r.f.Rate, 1000, 6000, r.phA)
	r.phB = Tone(r.vb, 1, r.f.Rate, 440, 6000, r.phB)
	r.srcs[0].PCM = nil
	if tick >= 5 && tick < 10 || tick >= 50 {
		r.srcs[0].PCM = r.va
	}
	r.srcs[1].PCM = r.vb
	if err := r.m.Mix(r.srcs); err != nil {
		t.Fatal(err)
	}
	if err := r.p.Encode(r.m, r.ls); err != nil {
		t.Fatal(err)
	}
	n, err := r.janus.Encode(r.m.MinusSelf(0), r.buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		dec *Decoder
		pkt []byte
		out []int16
	}{{r.dec, r.ls[0].Packet(), r.a}, {r.janusDec, r.buf[:n], r.j}, {r.sharedDec, r.ls[2].Packet(), r.s}} {
		if err := d.dec.Decode(d.pkt, d.out); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
	}
}

// What a listener hears across its switches stays close to what it would hear from an encoder of
// its own that never switched, and, back on the shared stream, to what the silent listeners hear.
func TestPlanSwitches(t *testing.T) {
	r := newSwitchRoom(t, DefaultHangover)
	back := -1
	for tick := 0; tick < 70; tick++ {
		r.tick(t, tick)
		switch {
		case tick == 50:
			// Onto its own encoder after 40 ticks on the shared one.
			if !r.ls[0].Own() || r.p.Primings() != primeFrames {
				t.Fatalf("tick 50: own %v, %d primings", r.ls[0].Own(), r.p.Primings())
			}
			if s := snr(r.a, r.j); s < 15 {
				t.Errorf("first own frame %.1f dB from the never-switched stream", s)
			}
		case tick > 10 && tick < 50 && !r.ls[0].Own():
			if back < 0 {
				back = tick
			}
			if s := snr(r.a, r.s); s < 30 {
				t.Errorf("tick %d, back on the shared stream: %.1f dB from it", tick, s)
			}
		}
	}
	if back != 10+DefaultHangover {
		t.Errorf("back on the shared stream at tick %d, want %d", back, 10+DefaultHangover)
	}
}

// Without the hangover, the first frame back on the shared stream is far off it: the reason for
// the hangover.
func TestPlanSwitchWithoutHangoverIsAudible(t *testing.T) {
	r := newSwitchRoom(t, 0)
	for tick := 0; tick <= 10; tick++ {
		r.tick(t, tick)
	}
	if r.ls[0].Own() {
		t.Fatal("still on its own encoder")
	}
	if s := snr(r.a, r.s); s > 20 {
		t.Errorf("immediate switch only %.1f dB from the shared stream: the hangover would not be needed", s)
	}
}
