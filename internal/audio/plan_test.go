package audio

import "testing"

// A talker moves to its own encoder on the tick it starts, stays there for the hangover after it
// stops, then returns to the shared encoding; its stream decodes throughout.
func TestPlanSwitchesAfterTheHangover(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	m, _ := NewMixer(f)
	p, _ := NewPlan(f, 3)
	a, _ := NewListener(f, EncoderConfig{})
	b, _ := NewListener(f, EncoderConfig{})
	dec, _ := NewDecoder(f)
	pcm := make([]int16, f.FrameLen())
	voice := make([]int16, f.FrameLen())
	phase := 0
	srcs := []Source{{Channels: 1, Volume: 100}, {Channels: 1, Volume: 100}}
	wantOwn := func(tick int) bool { return tick >= 5 && tick < 10+3 || tick >= 20 }
	for tick := 0; tick < 30; tick++ {
		srcs[0].PCM = nil
		srcs[1].PCM = nil
		phase = Tone(voice, 1, f.Rate, 300, 3000, phase)
		if tick >= 5 && tick < 10 || tick >= 20 {
			srcs[0].PCM = voice // a talks
		} else {
			srcs[1].PCM = voice // b talks, so the shared mix is not silence
		}
		if err := m.Mix(srcs); err != nil {
			t.Fatal(err)
		}
		if err := p.Encode(m, []*Listener{a, b, nil}); err != nil {
			t.Fatal(err)
		}
		if a.Own() != wantOwn(tick) {
			t.Fatalf("tick %d: a on its own encoder %v", tick, a.Own())
		}
		if err := dec.Decode(a.Packet(), pcm); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		// One encoding per listener on its own encoder, plus one shared if anyone is on it.
		want, shared := 0, false
		for _, l := range []*Listener{a, b} {
			if l.Own() {
				want++
			} else {
				shared = true
			}
		}
		if shared {
			want++
		}
		if n := p.Encodings(); n != want {
			t.Fatalf("tick %d: %d encodings, want %d", tick, n, want)
		}
	}
}

// Listeners with different settings do not share; the number of shared encoders stays bounded when
// a client keeps changing its bitrate.
func TestPlanSharesPerSettingAndBoundsThem(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	m, _ := NewMixer(f)
	p, _ := NewPlan(f, 0)
	ls := []*Listener{}
	for _, br := range []int{0, 0, 24000, 24000, 0} {
		l, _ := NewListener(f, EncoderConfig{Bitrate: br})
		ls = append(ls, l)
	}
	srcs := make([]Source, len(ls))
	m.Mix(srcs)
	if err := p.Encode(m, ls); err != nil {
		t.Fatal(err)
	}
	if p.Encodings() != 2 {
		t.Fatalf("%d encodings for two settings", p.Encodings())
	}
	if &ls[0].Packet()[0] != &ls[4].Packet()[0] || &ls[2].Packet()[0] != &ls[3].Packet()[0] || &ls[0].Packet()[0] == &ls[2].Packet()[0] {
		t.Fatal("packets not shared by setting")
	}
	for br := 10000; br < 10000+5*maxShared; br += 1000 {
		if err := ls[1].Configure(EncoderConfig{Bitrate: br}); err != nil {
			t.Fatal(err)
		}
		m.Mix(srcs)
		if err := p.Encode(m, ls); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.shared) > maxShared {
		t.Fatalf("%d shared encoders", len(p.shared))
	}
	if err := ls[1].Configure(EncoderConfig{Complexity: 42}); err == nil {
		t.Fatal("complexity 42 accepted")
	}
}
