package audio

import (
	"math"
	"testing"
)

// decimateTone passes 25 frames of a 48 kHz tone through a decimator to rate and returns the
// output after the first five frames (past the filter's delay).
func decimateTone(rate int, freq float64) []int16 {
	d := newDecimator(OpusClock/rate, OpusClock*FrameMs/1000)
	in := make([]int16, OpusClock*FrameMs/1000)
	out := make([]int16, rate*FrameMs/1000)
	var kept []int16
	idx := 0
	for i := range 25 {
		idx = Tone(in, 1, OpusClock, freq, 16000, idx)
		for k, v := range in {
			d.input()[k] = float32(v)
		}
		d.run(out, 1, 0)
		if i >= 5 {
			kept = append(kept, out...)
		}
	}
	return kept
}

// The decimator keeps a tone in the passband at its level, for every room rate.
func TestDecimatorPassband(t *testing.T) {
	const amp = 16000.0 / 32768
	for _, rate := range []int{8000, 12000, 16000, 24000, 48000} {
		for _, freq := range []float64{440, 0.38 * float64(rate)} {
			out := decimateTone(rate, freq)
			if got := ToneLevel(out, 1, 0, rate, freq); math.Abs(got-amp) > 0.01*amp {
				t.Errorf("%d Hz: a %.0f Hz tone at %.4f, want %.4f ± 1%%", rate, freq, got, amp)
			}
		}
	}
}

// What lies above the room's Nyquist frequency is removed, not folded back into the band: a tone
// at 1.25 times Nyquist (5 kHz for 8 kHz) would alias at 0.75 times it.
func TestDecimatorRemovesAliases(t *testing.T) {
	const amp = 16000.0 / 32768
	for _, rate := range []int{8000, 12000, 16000, 24000} {
		nyq := float64(rate) / 2
		out := decimateTone(rate, 1.25*nyq)
		if alias := ToneLevel(out, 1, 0, rate, 0.75*nyq); alias > amp/1000 {
			t.Errorf("%d Hz: the %.0f Hz tone aliases onto %.0f Hz at %.6f, want under 60 dB below %.4f",
				rate, 1.25*nyq, 0.75*nyq, alias, amp)
		}
	}
}

// The filter's taps sum to 1 (unity gain) and their absolute sum stays small, so the accumulator
// stays far inside int32 before clipping.
func TestDecimatorTaps(t *testing.T) {
	for m := 2; m <= 6; m++ {
		var sum, abs float64
		for _, h := range newDecimator(m, 960).taps {
			sum += float64(h)
			abs += math.Abs(float64(h))
		}
		if math.Abs(sum-1) > 1e-5 || abs > 4 {
			t.Errorf("m=%d: taps sum to %.6f (absolute %.4f)", m, sum, abs)
		}
	}
}

// A full-scale step, whose ringing overshoots, clips instead of wrapping around. A sharp low-pass
// rings at its cutoff frequency about 9 % of the step either side of it (the Gibbs phenomenon of
// the sine integral), so the samples before it may dip that far below zero, no further.
func TestDecimatorClips(t *testing.T) {
	d := newDecimator(3, 960)
	out := make([]int16, 320)
	for frame := range 2 {
		for k := range d.input() {
			d.input()[k] = math.MaxInt16
		}
		d.run(out, 1, 0)
		for j, v := range out {
			if v < -4000 || (frame == 1 && v < math.MaxInt16-8) {
				t.Fatalf("frame %d: a full-scale step came out at %d (sample %d)", frame, v, j)
			}
		}
	}
}
