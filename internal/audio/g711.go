package audio

import (
	"errors"
	"fmt"

	"github.com/zaf/g711"
)

// G.711 is the zaf/g711 package's per-sample ITU-T G.711 tables (BSD-3, pure Go, no
// dependencies; its per-sample functions allocate nothing). It is a finished codec: the package's
// tests check it against the ITU reference and g711_test.go checks known vectors here.

// Law is a G.711 companding law.
type Law uint8

// The two laws: μ-law (PCMU, North America and Japan) and A-law (PCMA, elsewhere).
const (
	ULaw Law = iota
	ALaw
)

// G711Rate is G.711's sampling rate (and RTP clock); a 20 ms packet holds G711Samples bytes.
const (
	G711Rate    = 8000
	G711Samples = G711Rate * FrameMs / 1000
)

// concealFrames is how many lost frames in a row G.711 concealment fills (each at half the level
// of the one before) before it falls silent.
const concealFrames = 4

func (l Law) decode(b byte) int16 {
	if l == ALaw {
		return g711.DecodeAlawFrame(b)
	}
	return g711.DecodeUlawFrame(b)
}

func (l Law) encode(v int16) byte {
	if l == ALaw {
		return g711.EncodeAlawFrame(v)
	}
	return g711.EncodeUlawFrame(v)
}

// G711Decoder decodes a G.711 participant's 20 ms packets into the room's format: 8 kHz mono
// resampled to the room's rate, copied into every channel. It has no FEC; a lost frame repeats the
// last one, fading.
type G711Decoder struct {
	f      Format
	law    Law
	up     *Resampler
	narrow [G711Samples]int16
	mono   []int16
	last   []int16 // the last frame played, for concealment (interleaved, room format)
	lost   int     // consecutive concealed frames
}

// NewG711Decoder returns a decoder of law into f.
func NewG711Decoder(f Format, law Law) (*G711Decoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	up, err := NewResampler(G711Rate, f.Rate)
	if err != nil {
		return nil, err
	}
	return &G711Decoder{f: f, law: law, up: up, mono: make([]int16, f.Samples()), last: make([]int16, f.FrameLen())}, nil
}

// errG711Frame: a G.711 packet of another duration than 20 ms.
var errG711Frame = fmt.Errorf("%w (G.711: %d bytes)", ErrFrameDuration, G711Samples)

// Decode decodes pkt, which must hold 20 ms (160 bytes), into pcm[:FrameLen].
func (d *G711Decoder) Decode(pkt []byte, pcm []int16) error {
	if len(pcm) < d.f.FrameLen() {
		return fmt.Errorf("audio: pcm buffer holds %d values, a frame needs %d", len(pcm), d.f.FrameLen())
	}
	if len(pkt) != G711Samples {
		return errG711Frame
	}
	for i, b := range pkt {
		d.narrow[i] = d.law.decode(b)
	}
	if err := d.up.Resample(d.narrow[:], d.mono); err != nil {
		return err
	}
	spread(d.mono, pcm, d.f.Channels)
	copy(d.last, pcm[:d.f.FrameLen()])
	d.lost = 0
	return nil
}

// spread copies mono samples into every channel of interleaved pcm.
func spread(mono, pcm []int16, channels int) {
	for i, v := range mono {
		for c := 0; c < channels; c++ {
			pcm[i*channels+c] = v
		}
	}
}

// DecodeFEC conceals: G.711 carries no redundancy.
func (d *G711Decoder) DecodeFEC(_ []byte, pcm []int16) error { return d.Conceal(pcm) }

// Conceal repeats the last frame at half its level, concealFrames times, then plays silence.
func (d *G711Decoder) Conceal(pcm []int16) error {
	n := d.f.FrameLen()
	if len(pcm) < n {
		return fmt.Errorf("audio: pcm buffer holds %d values, a frame needs %d", len(pcm), n)
	}
	d.lost++
	for i := range d.last {
		if d.lost > concealFrames {
			d.last[i] = 0
		} else {
			d.last[i] /= 2
		}
	}
	copy(pcm[:n], d.last)
	return nil
}

// Reset forgets the history.
func (d *G711Decoder) Reset() error {
	d.up.Reset()
	clear(d.last)
	d.lost = 0
	return nil
}

// G711Encoder encodes the room's 20 ms frames for a G.711 listener: channels averaged to mono,
// resampled to 8 kHz, companded.
type G711Encoder struct {
	f    Format
	law  Law
	down *Resampler
	mono []int16
	nb   [G711Samples]int16
}

// NewG711Encoder returns an encoder of frames in format f into law.
func NewG711Encoder(f Format, law Law) (*G711Encoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	down, err := NewResampler(f.Rate, G711Rate)
	if err != nil {
		return nil, err
	}
	return &G711Encoder{f: f, law: law, down: down, mono: make([]int16, f.Samples())}, nil
}

var errG711Out = errors.New("audio: G.711 output buffer is shorter than one 20 ms packet")

// Encode encodes one frame pcm into out and returns the packet's length (always G711Samples).
func (e *G711Encoder) Encode(pcm []int16, out []byte) (int, error) {
	if len(pcm) != e.f.FrameLen() {
		return 0, fmt.Errorf("audio: frame of %d values, want %d", len(pcm), e.f.FrameLen())
	}
	if len(out) < G711Samples {
		return 0, errG711Out
	}
	ch := e.f.Channels
	for i := range e.mono {
		var sum int32
		for c := 0; c < ch; c++ {
			sum += int32(pcm[i*ch+c])
		}
		e.mono[i] = int16(sum / int32(ch))
	}
	if err := e.down.Resample(e.mono, e.nb[:]); err != nil {
		return 0, err
	}
	for i, v := range e.nb {
		out[i] = e.law.encode(v)
	}
	return G711Samples, nil
}

// Reset forgets the history.
func (e *G711Encoder) Reset() { e.down.Reset() }
