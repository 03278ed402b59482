package audio

import "fmt"

// MaxVolume bounds a source's volume (percent): ten times louder is already clipping speech.
const MaxVolume = 1000

// gainOne is unity gain in the mixer's Q12 fixed point: sample × gain stays within int32 for any
// volume up to MaxVolume.
const gainOne = 1 << 12

// Source is one participant's part in a tick.
type Source struct {
	PCM      []int16 // this tick's frame, interleaved in Channels; nil when the participant has nothing
	Channels int     // of PCM: 1 or 2
	Volume   int     // percent (Janus's volume); 100 leaves the audio unchanged
	Muted    bool    // muted participants are not mixed (the listener still hears the others)
	Pan      int     // 0 left, 50 centre, 100 right (Janus's spatial_position); used in a stereo room
}

// contributes says whether the source adds audio to this tick's mix.
func (s *Source) contributes() bool { return s.PCM != nil && !s.Muted && s.Volume > 0 }

// Mixer mixes one room's tick: the full mix of every contributing source, and for each of them the
// mix without itself. Sums run in int32 and saturate to int16 once, at the end, so many loud
// talkers clip the output rather than wrap. Buffers are per source index and allocated the first
// time an index contributes, so a steady tick allocates nothing. Not safe for concurrent use.
type Mixer struct {
	f       Format
	acc     []int32
	full    []int16
	own     [][]int32 // own[i]: source i's scaled contribution, valid when contrib[i]
	minus   [][]int16 // minus[i]: the mix without source i, valid when contrib[i]
	contrib []bool
}

// NewMixer returns a mixer for a room of format f (stereo when the room has spatial audio).
func NewMixer(f Format) (*Mixer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	n := f.FrameLen()
	return &Mixer{f: f, acc: make([]int32, n), full: make([]int16, n)}, nil
}

// Format is the room's format.
func (m *Mixer) Format() Format { return m.f }

// Mix mixes one tick of srcs; source i's results are then Contributed(i) and MinusSelf(i). A source
// whose PCM is not one frame in its channels is an error and is left out, the others are mixed.
func (m *Mixer) Mix(srcs []Source) error {
	for len(m.contrib) < len(srcs) {
		m.contrib = append(m.contrib, false)
		m.own = append(m.own, nil)
		m.minus = append(m.minus, nil)
	}
	clear(m.acc)
	clear(m.contrib)
	var bad error
	for i := range srcs {
		s := &srcs[i]
		if !s.contributes() {
			continue
		}
		if s.Channels < 1 || s.Channels > 2 || len(s.PCM) != m.f.Samples()*s.Channels {
			bad = fmt.Errorf("audio: source %d: %d values in %d channels, a frame is %d samples", i, len(s.PCM), s.Channels, m.f.Samples())
			continue
		}
		if m.own[i] == nil {
			m.own[i] = make([]int32, len(m.acc))
			m.minus[i] = make([]int16, len(m.acc))
		}
		m.scale(s, m.own[i])
		for k, v := range m.own[i] {
			m.acc[k] += v
		}
		m.contrib[i] = true
	}
	saturate(m.full, m.acc)
	for i, c := range m.contrib {
		if c {
			minusInto(m.minus[i], m.acc, m.own[i])
		}
	}
	return bad
}

// Full is the tick's mix of every contributing source: what a listener who contributed nothing
// hears. Valid until the next Mix.
func (m *Mixer) Full() []int16 { return m.full }

// Contributed reports whether source i was mixed this tick.
func (m *Mixer) Contributed(i int) bool { return i < len(m.contrib) && m.contrib[i] }

// MinusSelf is what source i hears this tick: the mix without its own audio (the full mix when it
// contributed nothing). Valid until the next Mix.
func (m *Mixer) MinusSelf(i int) []int16 {
	if m.Contributed(i) {
		return m.minus[i]
	}
	return m.full
}

// gains returns the Q12 gains of a source's left and right output (the same in a mono room). A
// stereo room pans as Janus does: left (100-Pan) %, right Pan %, so a centred source is mixed at
// half its level in each channel.
func (m *Mixer) gains(s *Source) (l, r int32) {
	vol := int32(min(s.Volume, MaxVolume))
	if m.f.Channels == 1 {
		return vol * gainOne / 100, vol * gainOne / 100
	}
	pan := int32(min(max(s.Pan, 0), 100))
	return vol * (100 - pan) * gainOne / 10000, vol * pan * gainOne / 10000
}

// scale writes source s's contribution, in the room's channels, into out.
func (m *Mixer) scale(s *Source, out []int32) {
	gl, gr := m.gains(s)
	pcm := s.PCM
	switch {
	case m.f.Channels == 1 && s.Channels == 1:
		for k, v := range pcm {
			out[k] = int32(v) * gl / gainOne
		}
	case m.f.Channels == 1: // stereo source, mono room: average the channels
		for k := range out {
			out[k] = (int32(pcm[2*k]) + int32(pcm[2*k+1])) / 2 * gl / gainOne
		}
	case s.Channels == 1: // mono source, stereo room: pan
		for k, v := range pcm {
			out[2*k] = int32(v) * gl / gainOne
			out[2*k+1] = int32(v) * gr / gainOne
		}
	default:
		for k := 0; k < len(out); k += 2 {
			out[k] = int32(pcm[k]) * gl / gainOne
			out[k+1] = int32(pcm[k+1]) * gr / gainOne
		}
	}
}

func clamp16(v int32) int16 {
	return int16(min(max(v, -32768), 32767))
}

func saturate(dst []int16, acc []int32) {
	for k, v := range acc {
		dst[k] = clamp16(v)
	}
}

func minusInto(dst []int16, acc, own []int32) {
	for k, v := range acc {
		dst[k] = clamp16(v - own[k])
	}
}
