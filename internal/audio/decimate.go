package audio

import "math"

// decimator converts one channel of 20 ms frames at 48 kHz (what libopusfile decodes) down to a
// room rate, 48000/m, with a windowed-sinc low-pass FIR before keeping every m-th sample.
//
// The Resampler is not used here: it is built for G.711's narrowband voice, and its boxcar
// attenuates what would alias rather than removing it (a 5 kHz tone decimated 48 kHz → 8 kHz
// comes out at 3 kHz only about 6 dB down). Announcement files are full-band music and speech, so
// this filter removes everything above the room's Nyquist frequency: passband to 0.4 of the output
// rate (3.2 kHz at 8 kHz), stopband from 0.5 of it (about 74 dB down with a Blackman window, whose
// transition width is about 5.5 / taps of the input rate). The room rates divide 48 kHz, so no
// interpolation is needed. It runs on the file reader's goroutine, never on the mixer's: about
// 2.6 M multiply-adds per second of audio per channel whatever the rate.
type decimator struct {
	m    int       // decimation factor, 48000 / room rate
	taps []float32 // symmetric, odd length; one tap of 1 when m is 1
	buf  []float32 // len(taps)-1 samples of history, then this frame's input
}

// newDecimator returns a decimator by m of frames of in samples (in a multiple of m).
func newDecimator(m, in int) *decimator {
	d := &decimator{m: m, taps: []float32{1}}
	if m > 1 {
		d.taps = lowPass(55*m|1, 0.45/float64(m))
	}
	d.buf = make([]float32, len(d.taps)-1+in)
	return d
}

// lowPass designs an n-tap (n odd) Blackman-windowed sinc low-pass with cutoff fc (cycles per
// sample, the -6 dB point), normalised to unity gain at DC.
func lowPass(n int, fc float64) []float32 {
	h := make([]float64, n)
	mid := float64(n-1) / 2
	var sum float64
	for i := range h {
		x := float64(i) - mid
		v := 2 * fc
		if x != 0 {
			v = math.Sin(2*math.Pi*fc*x) / (math.Pi * x)
		}
		w := 0.42 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n-1)) + 0.08*math.Cos(4*math.Pi*float64(i)/float64(n-1))
		h[i] = v * w
		sum += h[i]
	}
	taps := make([]float32, n)
	for i, v := range h {
		taps[i] = float32(v / sum)
	}
	return taps
}

// input is where the caller writes the next frame's samples before calling run.
func (d *decimator) input() []float32 { return d.buf[len(d.taps)-1:] }

// run filters and decimates the frame in input() into out[j*stride+offset] for each output sample
// j (so it can write one channel of an interleaved frame), saturating to int16, and keeps the
// history for the next frame.
func (d *decimator) run(out []int16, stride, offset int) {
	t := len(d.taps)
	n := len(d.buf) - (t - 1) // input samples in this frame
	for j, i := 0, 0; i < n; j, i = j+1, i+d.m {
		var acc float32
		for k, h := range d.taps {
			acc += h * d.buf[i+k]
		}
		out[j*stride+offset] = roundInt16(acc)
	}
	copy(d.buf, d.buf[n:])
}

// roundInt16 rounds v to the nearest int16, clipping: the filter's ripple can overshoot full
// scale (the taps' absolute sum is about 2.1, so v stays far inside int32).
func roundInt16(v float32) int16 { return clamp16(int32(math.Round(float64(v)))) }
