package siplab

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/strata-rtc/strata/internal/audio"
)

// writeToneWAV writes seconds of a sine at freq Hz (half scale) as 16-bit mono PCM WAVE at rate:
// what baresip's aufile source plays into a call.
func writeToneWAV(path string, rate int, freq float64, seconds int) error {
	pcm := make([]int16, rate*seconds)
	audio.Tone(pcm, 1, rate, freq, 16384, 0)
	le := binary.LittleEndian
	data := uint32(2 * len(pcm))
	h := make([]byte, 0, 44+2*len(pcm))
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, 36+data)
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, 16)
	h = le.AppendUint16(h, 1) // PCM
	h = le.AppendUint16(h, 1) // mono
	h = le.AppendUint32(h, uint32(rate))
	h = le.AppendUint32(h, uint32(2*rate))
	h = le.AppendUint16(h, 2)
	h = le.AppendUint16(h, 16)
	h = append(h, "data"...)
	h = le.AppendUint32(h, data)
	for _, v := range pcm {
		h = le.AppendUint16(h, uint16(v))
	}
	return os.WriteFile(path, h, 0o644)
}

// PCM is decoded 16-bit audio read from a recording.
type PCM struct {
	Samples  []int16 // interleaved
	Rate     int
	Channels int
}

// ToneLevel is the strength of the tone at freq in the last seconds of the first channel (about 1
// for a full-scale sine, 0 for silence).
func (p PCM) ToneLevel(freq float64, seconds float64) float64 {
	n := int(seconds*float64(p.Rate)) * p.Channels
	s := p.Samples
	if n > 0 && len(s) > n {
		s = s[len(s)-n:]
	}
	return audio.ToneLevel(s, p.Channels, 0, p.Rate, freq)
}

// Duration is how much audio there is, in seconds.
func (p PCM) Duration() float64 {
	if p.Rate == 0 || p.Channels == 0 {
		return 0
	}
	return float64(len(p.Samples)/p.Channels) / float64(p.Rate)
}

// readWAV reads a 16-bit PCM WAVE file that may still be being written: a data chunk whose size
// is not yet filled in (0) or is larger than the file runs to the end of the file.
func readWAV(path string) (PCM, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PCM{}, err
	}
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return PCM{}, fmt.Errorf("%s: not a WAVE file", path)
	}
	le := binary.LittleEndian
	var p PCM
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int(le.Uint32(b[off+4:off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if body+16 > len(b) {
				return PCM{}, fmt.Errorf("%s: short fmt chunk", path)
			}
			if f := le.Uint16(b[body:]); f != 1 || le.Uint16(b[body+14:]) != 16 {
				return PCM{}, fmt.Errorf("%s: not 16-bit PCM", path)
			}
			p.Channels = int(le.Uint16(b[body+2:]))
			p.Rate = int(le.Uint32(b[body+4:]))
		case "data":
			end := body + size
			if size == 0 || end > len(b) {
				end = len(b)
			}
			end -= (end - body) % 2
			if p.Rate == 0 || p.Channels == 0 {
				return PCM{}, fmt.Errorf("%s: data before fmt", path)
			}
			p.Samples = make([]int16, (end-body)/2)
			for i := range p.Samples {
				p.Samples[i] = int16(le.Uint16(b[body+2*i:]))
			}
			return p, nil
		}
		off = body + size + size%2
	}
	return PCM{}, fmt.Errorf("%s: no data chunk", path)
}
