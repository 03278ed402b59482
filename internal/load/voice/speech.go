package voice

import (
	"math"
	"math/rand/v2"
)

// A speech-like signal by source-filter synthesis: a glottal pulse train at a wandering pitch
// through three formant resonators, in syllables of 120–280 ms with vowel-like formants, short
// fricative bursts, gaps between syllables and pauses between phrases. It is not intelligible;
// it has what matters to an Opus encoder and a mixer: voiced harmonics, a syllabic envelope and
// pauses, hence speech's bitrate, spectrum and level statistics.

// vowels are (F1, F2, F3) in Hz.
var vowels = [][3]float64{{730, 1090, 2440}, {270, 2290, 3010}, {300, 870, 2240}, {530, 1840, 2480}, {570, 840, 2410}, {660, 1720, 2410}}

// pitches are the voices' mean fundamentals, Hz.
var pitches = []float64{110, 205, 135, 230, 120, 180, 98, 250}

// resonator is a two-pole band-pass filter.
type resonator struct{ a1, a2, g, y1, y2 float64 }

func (r *resonator) tune(freq, bw float64) {
	rad := math.Exp(-math.Pi * bw / Rate)
	r.a1 = 2 * rad * math.Cos(2*math.Pi*freq/Rate)
	r.a2 = -rad * rad
	r.g = 1 - rad
}

func (r *resonator) step(x float64) float64 {
	y := r.g*x + r.a1*r.y1 + r.a2*r.y2
	r.y2, r.y1 = r.y1, y
	return y
}

// syllable is one stretch of the clip: voiced (with a vowel) or a pause.
type syllable struct {
	start, n  int
	voiced    bool
	vowel     int
	pitch     float64 // relative pitch, around 1
	fricative int     // samples of noise burst at the start
}

// plan lays out syllables, gaps and phrase pauses over n samples.
func plan(rng *rand.Rand, n int) []syllable {
	var out []syllable
	at, inPhrase := 0, 0
	phraseLen := 4 + rng.IntN(5)
	ms := func(lo, hi int) int { return (lo + rng.IntN(hi-lo+1)) * Rate / 1000 }
	for at < n {
		s := syllable{start: at, n: ms(120, 280), voiced: true, vowel: rng.IntN(len(vowels)), pitch: 0.92 + 0.16*rng.Float64()}
		if rng.IntN(3) == 0 {
			s.fricative = ms(40, 80)
		}
		out = append(out, s)
		at += s.n
		inPhrase++
		gap := ms(20, 80)
		if inPhrase == phraseLen {
			gap, inPhrase, phraseLen = ms(200, 450), 0, 4+rng.IntN(5)
		}
		out = append(out, syllable{start: at, n: gap})
		at += gap
	}
	return out
}

// speech synthesises n samples of voice v, syllables at SpeechDBov ± 3 dB, over the quiet room.
func speech(v, n int) []int16 {
	rng := rand.New(rand.NewPCG(uint64(v)+1, 0x5eed))
	f0 := pitches[v%len(pitches)] * (1 + 0.03*float64(v/len(pitches)))
	sig := make([]float64, n)
	var formants [3]resonator
	phase := 0.0
	for _, s := range plan(rng, n) {
		if !s.voiced {
			continue
		}
		for k := range formants {
			formants[k].tune(vowels[s.vowel][k], 60+40*float64(k))
		}
		for i := 0; i < s.n && s.start+i < n; i++ {
			t := float64(s.start+i) / Rate
			e := envelope(i, s.n)
			// The pitch glides within the syllable and wanders slowly over the phrase.
			f := f0 * s.pitch * (1 + 0.08*math.Sin(2*math.Pi*0.4*t+float64(v))) * (1 - 0.1*float64(i)/float64(s.n))
			phase += f / Rate
			x := 0.0
			if phase >= 1 {
				phase -= 1
				x = 1 // one glottal pulse a period
			}
			if i < s.fricative {
				x += 0.15 * (rng.Float64() - 0.5)
			}
			y := x
			for k := range formants {
				y = formants[k].step(y)
			}
			sig[s.start+i] = y * e
		}
		// Vowels resonate very differently; a speaker's syllables differ by a few dB, not 20.
		loudness(sig[s.start:min(s.start+s.n, n)], SpeechDBov-3+6*rng.Float64())
	}
	pcm := make([]int16, n)
	for i, x := range sig {
		pcm[i] = clip16(x)
	}
	addNoise(pcm, rng, NoiseDBov)
	return pcm
}

// envelope rises over 20 ms and falls over the last 40 ms of a syllable (raised cosines).
func envelope(i, n int) float64 {
	const attack, release = Rate / 50, Rate / 25
	switch {
	case i < attack:
		return 0.5 - 0.5*math.Cos(math.Pi*float64(i)/attack)
	case n-i < release:
		return 0.5 - 0.5*math.Cos(math.Pi*float64(n-i)/release)
	}
	return 1
}

// loudness scales a syllable so that its middle (past the attack, before the release) has an RMS
// of dbov.
func loudness(syl []float64, dbov float64) {
	const attack, release = Rate / 50, Rate / 25
	if len(syl) <= attack+release {
		return
	}
	var sum float64
	for _, x := range syl[attack : len(syl)-release] {
		sum += x * x
	}
	if sum == 0 {
		return
	}
	g := 32768 * math.Pow(10, dbov/20) / math.Sqrt(sum/float64(len(syl)-attack-release))
	for i := range syl {
		syl[i] *= g
	}
}
