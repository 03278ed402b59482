package audio

import (
	"errors"
	"math"
	"testing"
)

// g711ToneFrames encodes frames 20 ms frames of a tone (amplitude 8000) as G.711, from 48 kHz
// PCM through the encoder's downsampling.
func g711ToneFrames(t testing.TB, law Law, freq float64, frames int) [][]byte {
	t.Helper()
	enc, err := NewG711Encoder(upFormat, law)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, upFormat.FrameLen())
	pkts := make([][]byte, frames)
	idx := 0
	for i := range pkts {
		idx = Tone(pcm, 1, upFormat.Rate, freq, 8000, idx)
		pkts[i] = make([]byte, G711Samples)
		if n, err := enc.Encode(pcm, pkts[i]); err != nil || n != G711Samples {
			t.Fatalf("encode: %d bytes, %v", n, err)
		}
	}
	return pkts
}

// Known values of ITU-T G.711 (Table 1 and 2: the decision and reconstruction levels, scaled to
// 16 bits): the ends of each law's range and its zero codes.
func TestG711KnownVectors(t *testing.T) {
	for _, v := range []struct {
		law  Law
		code byte
		pcm  int16
	}{
		{ULaw, 0xff, 0}, {ULaw, 0x7f, 0}, {ULaw, 0x80, 32124}, {ULaw, 0x00, -32124}, {ULaw, 0xfe, 8}, {ULaw, 0x7e, -8},
		{ALaw, 0xd5, 8}, {ALaw, 0x55, -8}, {ALaw, 0xaa, 32256}, {ALaw, 0x2a, -32256},
	} {
		if got := v.law.decode(v.code); got != v.pcm {
			t.Errorf("law %d: %#02x decodes to %d, want %d", v.law, v.code, got, v.pcm)
		}
	}
	if c := ULaw.encode(0); c != 0xff {
		t.Errorf("μ-law encodes 0 as %#02x, want 0xff", c)
	}
	if c := ALaw.encode(0); c != 0xd5 {
		t.Errorf("A-law encodes 0 as %#02x, want 0xd5", c)
	}
	// Every code survives decode and encode (the laws are bijective apart from μ-law's two zeros).
	for _, law := range []Law{ULaw, ALaw} {
		for c := 0; c < 256; c++ {
			if law == ULaw && c == 0x7f {
				continue
			}
			if back := law.encode(law.decode(byte(c))); back != byte(c) {
				t.Errorf("law %d: %#02x comes back as %#02x", law, c, back)
			}
		}
	}
}

// resampleTone passes frames of a tone at inRate through a resampler and returns the output
// after the first five frames.
func resampleTone(t *testing.T, inRate, outRate int, freq float64) []int16 {
	t.Helper()
	r, err := NewResampler(inRate, outRate)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int16, inRate*FrameMs/1000)
	out := make([]int16, outRate*FrameMs/1000)
	var kept []int16
	idx := 0
	for i := range 25 {
		idx = Tone(in, 1, inRate, freq, 8000, idx)
		if err := r.Resample(in, out); err != nil {
			t.Fatal(err)
		}
		if i >= 5 {
			kept = append(kept, out...)
		}
	}
	return kept
}

// Resampling keeps a voice band tone's frequency and level, up and down between every room rate
// and G.711's, and adds no other tone.
func TestResamplerKeepsTheTone(t *testing.T) {
	const amp = 8000.0 / 32768
	for _, rates := range [][2]int{{8000, 8000}, {8000, 12000}, {8000, 16000}, {8000, 24000}, {8000, 48000},
		{12000, 8000}, {16000, 8000}, {24000, 8000}, {48000, 8000}} {
		out := resampleTone(t, rates[0], rates[1], 440)
		on, off := ToneLevel(out, 1, 0, rates[1], 440), ToneLevel(out, 1, 0, rates[1], 1000)
		if math.Abs(on-amp) > 0.05*amp || off > 0.01*amp {
			t.Errorf("%d → %d Hz: 440 Hz at %.4f (want %.4f ± 5%%), 1000 Hz at %.4f", rates[0], rates[1], on, amp, off)
		}
	}
}

// Downsampling attenuates what would alias: a 7 kHz tone at 48 kHz folds onto 1 kHz at 8 kHz.
func TestResamplerAttenuatesAliases(t *testing.T) {
	out := resampleTone(t, 48000, 8000, 7000)
	if alias := ToneLevel(out, 1, 0, 8000, 1000); alias > 0.2*8000/32768 {
		t.Fatalf("the 7 kHz tone aliases onto 1 kHz at %.4f, want under a fifth of its level", alias)
	}
}

func TestResamplerRefusesWrongFrames(t *testing.T) {
	if _, err := NewResampler(8000, 44100); err == nil {
		t.Fatal("44.1 kHz accepted")
	}
	r, err := NewResampler(8000, 16000)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Resample(make([]int16, 160), make([]int16, 160)); err == nil {
		t.Fatal("a short output frame accepted")
	}
}

func TestG711DecoderRefusesOtherDurationsAndConceals(t *testing.T) {
	f := Format{Rate: 8000, Channels: 1}
	d, err := NewG711Decoder(f, ULaw)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, f.FrameLen())
	if err := d.Decode(make([]byte, 80), pcm); !errors.Is(err, ErrFrameDuration) {
		t.Fatalf("a 10 ms packet: %v, want ErrFrameDuration", err)
	}
	full := make([]byte, G711Samples)
	for i := range full {
		full[i] = 0x80 // the loudest positive code
	}
	if err := d.Decode(full, pcm); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int16{32124 / 2, 32124 / 4, 32124 / 8, 32124 / 16, 0} {
		if err := d.DecodeFEC(nil, pcm); err != nil {
			t.Fatal(err)
		}
		if pcm[G711Samples-1] != want {
			t.Fatalf("concealed frame %d at %d, want %d", i+1, pcm[G711Samples-1], want)
		}
	}
}

func TestG711EncoderRefusesWrongBuffers(t *testing.T) {
	e, err := NewG711Encoder(Format{Rate: 16000, Channels: 1}, ALaw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Encode(make([]int16, 160), make([]byte, G711Samples)); err == nil {
		t.Fatal("an 8 kHz frame accepted by a 16 kHz encoder")
	}
	if _, err := e.Encode(make([]int16, 320), make([]byte, 100)); err == nil {
		t.Fatal("a short output buffer accepted")
	}
}
