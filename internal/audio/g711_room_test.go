package audio

import (
	"testing"

	"github.com/strata-rtc/strata/internal/media"
)

// mixedRoom is a 16 kHz room of an Opus talker (440 Hz), a PCMU talker (770 Hz) and a silent PCMA
// listener; each talker's listener is decoded as its client would (Opus at 16 kHz, G.711 at 8 kHz).
type mixedRoom struct {
	f, phone          Format
	opusIn, pcmuIn    *Input
	opusPkts          [][]byte
	pcmuPkts          [][]byte
	ls                []*Listener
	srcs              []Source
	mix               *Mixer
	plan              *Plan
	opusDec           *Decoder
	pcmuDec, pcmaDec  *G711Decoder
	wide, narrow, nb2 []int16
	tick              int
}

// must fails the test on a constructor's error: must(NewX(...))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func newMixedRoom(t testing.TB) *mixedRoom {
	f, phone := Format{Rate: 16000, Channels: 1}, Format{Rate: G711Rate, Channels: 1}
	voice := Source{Channels: 1, Volume: 100, Pan: 50}
	r := &mixedRoom{
		f: f, phone: phone,
		opusIn:   must(NewCodecInput(media.CodecOpus, f, 2))(t),
		pcmuIn:   must(NewCodecInput(media.CodecPCMU, f, 2))(t),
		opusPkts: toneFrames(t, upFormat, EncoderConfig{}, 440, 50),
		pcmuPkts: g711ToneFrames(t, ULaw, 770, 50),
		ls: []*Listener{must(NewListener(f, EncoderConfig{}))(t), must(NewG711Listener(f, ULaw))(t),
			must(NewG711Listener(f, ALaw))(t)},
		srcs:    []Source{voice, voice, voice},
		mix:     must(NewMixer(f))(t),
		plan:    must(NewPlan(f, -1))(t),
		opusDec: must(NewDecoder(f))(t),
		pcmuDec: must(NewG711Decoder(phone, ULaw))(t),
		pcmaDec: must(NewG711Decoder(phone, ALaw))(t),
		wide:    make([]int16, f.FrameLen()), narrow: make([]int16, phone.FrameLen()), nb2: make([]int16, phone.FrameLen()),
	}
	return r
}

// step runs one tick: both talkers' packets arrive, the room is mixed and encoded, and the three
// listeners' packets are decoded into wide (Opus), narrow (PCMU) and nb2 (PCMA).
func (r *mixedRoom) step(t testing.TB) {
	k := r.tick
	r.tick++
	r.opusIn.Push(uint16(k), uint32(k*960), r.opusPkts[k%len(r.opusPkts)])
	r.pcmuIn.Push(uint16(k), uint32(k*G711Samples), r.pcmuPkts[k%len(r.pcmuPkts)])
	r.srcs[0].PCM, r.srcs[1].PCM = r.opusIn.Next(), r.pcmuIn.Next()
	if err := r.mix.Mix(r.srcs); err != nil {
		t.Fatal(err)
	}
	if err := r.plan.Encode(r.mix, r.ls); err != nil {
		t.Fatal(err)
	}
	if err := r.opusDec.Decode(r.ls[0].Packet(), r.wide); err != nil {
		t.Fatal(err)
	}
	if err := r.pcmuDec.Decode(r.ls[1].Packet(), r.narrow); err != nil {
		t.Fatal(err)
	}
	if err := r.pcmaDec.Decode(r.ls[2].Packet(), r.nb2); err != nil {
		t.Fatal(err)
	}
}

// Opus and G.711 participants share a room: each talker hears the other and not itself, whatever
// codec either uses; the silent G.711 listener hears both, decoded at 8 kHz as a phone would.
func TestPlanMixesOpusAndG711Participants(t *testing.T) {
	r := newMixedRoom(t)
	if err := r.ls[2].Configure(EncoderConfig{Bitrate: 32000}); err != nil {
		t.Fatalf("configuring a G.711 listener: %v", err)
	}
	var heardOpus, heardPCMU, heardPCMA []int16
	for tick := range 60 {
		r.step(t)
		if tick >= 20 {
			heardOpus = append(heardOpus, r.wide...)
			heardPCMU = append(heardPCMU, r.narrow...)
			heardPCMA = append(heardPCMA, r.nb2...)
		}
	}
	for _, c := range []struct {
		who             string
		pcm             []int16
		rate            int
		hears, notHeard float64
	}{
		{"opus talker", heardOpus, r.f.Rate, 770, 440},
		{"pcmu talker", heardPCMU, G711Rate, 440, 770},
		{"pcma listener", heardPCMA, G711Rate, 440, 0},
		{"pcma listener", heardPCMA, G711Rate, 770, 0},
	} {
		if l := ToneLevel(c.pcm, 1, 0, c.rate, c.hears); l < 0.15 {
			t.Errorf("%s hears %v Hz at only %.4f", c.who, c.hears, l)
		}
		if c.notHeard != 0 {
			if l := ToneLevel(c.pcm, 1, 0, c.rate, c.notHeard); l > 0.01 {
				t.Errorf("%s hears its own %v Hz at %.4f", c.who, c.notHeard, l)
			}
		}
	}
	if n := r.plan.Encodings(); n != 3 {
		t.Errorf("%d encodings per tick, want 3 (2 talkers, 1 G.711 listener)", n)
	}
}
