package audio

import "fmt"

// Resampler converts mono 20 ms frames from one of the room rates to another, for G.711
// participants (8 kHz) in rooms of other rates. It is deliberately simple, as voice over G.711 is
// narrowband anyway:
//
//   - Upsampling interpolates linearly between consecutive input samples. Linear interpolation's
//     response (sinc²) leaves the images of a voice band signal above the old Nyquist frequency
//     about 40–50 dB down, inaudible next to G.711's own quantisation noise.
//   - Downsampling first averages each run of round(in/out) input samples (a boxcar low-pass,
//     whose first null is at the output rate), then interpolates linearly. It attenuates what
//     would alias rather than removing it, which is what a mix of voices needs.
//
// Frames join without a click: the last input sample (and the boxcar's history) carry over, at
// the price of a fixed delay under one input sample. Everything is allocated by NewResampler;
// Resample allocates nothing. Not safe for concurrent use.
type Resampler struct {
	in, out int // samples per frame
	box     int // boxcar length (1: no filter)
	hist    []int32
	histPos int
	histSum int32
	y       []int32 // y[0] is the previous frame's last (filtered) sample, y[1:] this frame's
}

// NewResampler returns a resampler of 20 ms mono frames from inRate to outRate (Hz, each a valid
// room rate).
func NewResampler(inRate, outRate int) (*Resampler, error) {
	for _, r := range []int{inRate, outRate} {
		if err := (Format{Rate: r, Channels: 1}).Validate(); err != nil {
			return nil, err
		}
	}
	r := &Resampler{in: inRate * FrameMs / 1000, out: outRate * FrameMs / 1000, box: 1}
	if inRate > outRate {
		r.box = (inRate + outRate/2) / outRate
	}
	r.hist = make([]int32, r.box)
	r.y = make([]int32, r.in+1)
	return r, nil
}

// Resample converts in (one input frame) into out (one output frame).
func (r *Resampler) Resample(in, out []int16) error {
	if len(in) != r.in || len(out) != r.out {
		return fmt.Errorf("audio: resample %d samples into %d: want %d into %d", len(in), len(out), r.in, r.out)
	}
	r.y[0] = r.y[r.in]
	for j, v := range in {
		r.y[j+1] = r.filter(int32(v))
	}
	for k := range out {
		num := (k + 1) * r.in
		i, frac := num/r.out, int32(num%r.out)
		v := r.y[i] * int32(r.out)
		if frac != 0 {
			v += (r.y[i+1] - r.y[i]) * frac
		}
		out[k] = int16(v / int32(r.out))
	}
	return nil
}

// filter is the boxcar: the average of the last box samples.
func (r *Resampler) filter(v int32) int32 {
	if r.box == 1 {
		return v
	}
	r.histSum += v - r.hist[r.histPos]
	r.hist[r.histPos] = v
	r.histPos = (r.histPos + 1) % r.box
	return r.histSum / int32(r.box)
}

// Reset forgets the previous frames.
func (r *Resampler) Reset() {
	clear(r.hist)
	clear(r.y)
	r.histPos, r.histSum = 0, 0
}
