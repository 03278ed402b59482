package audio

import "math"

// ToneLevel measures how strong the tone at freq (Hz) is in one channel of interleaved PCM at
// rate, with the Goertzel algorithm: the magnitude of the signal's projection on that frequency,
// normalised so a full-scale sine gives about 1 and silence 0. Tests use it to tell which
// participants' tones a mix holds.
func ToneLevel(pcm []int16, channels, channel, rate int, freq float64) float64 {
	if channels < 1 || channel < 0 || channel >= channels || rate <= 0 {
		return 0
	}
	n := len(pcm) / channels
	if n == 0 {
		return 0
	}
	coeff := 2 * math.Cos(2*math.Pi*freq/float64(rate))
	var s1, s2 float64
	for k := 0; k < n; k++ {
		s0 := float64(pcm[k*channels+channel])/32768 + coeff*s1 - s2
		s2, s1 = s1, s0
	}
	power := s1*s1 + s2*s2 - coeff*s1*s2
	return 2 * math.Sqrt(max(power, 0)) / float64(n)
}

// Tone writes a sine of freq Hz and peak amplitude amp into every channel of pcm, continuing from
// sample index start (so consecutive frames join without a click), and returns the next index.
func Tone(pcm []int16, channels, rate int, freq, amp float64, start int) int {
	n := len(pcm) / channels
	for k := 0; k < n; k++ {
		v := int16(amp * math.Sin(2*math.Pi*freq*float64(start+k)/float64(rate)))
		for c := 0; c < channels; c++ {
			pcm[k*channels+c] = v
		}
	}
	return start + n
}
