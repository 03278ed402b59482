package voice

// Source is one participant's audio: the next 20 ms frame of its voice while the Floor says it
// talks, of its quiet room otherwise. Each voice clip keeps its place between spurts, so a
// participant's spurts are different stretches of speech. It is used by one goroutine (the
// participant's pacer) and allocates nothing.
type Source struct {
	floor  *Floor
	index  int
	talk   []Frame
	quiet  []Frame
	ti, qi int
	talked uint64
	frames uint64
}

// NewSource is participant index's stream: voice index modulo the bank's voices, starting at a
// place in the clips that depends on the index, so participants sharing a voice do not say the
// same thing at the same time.
func NewSource(b *Bank, f *Floor, index int) *Source {
	talk := b.Talk[index%len(b.Talk)]
	return &Source{floor: f, index: index, talk: talk, quiet: b.Quiet,
		ti: (index * 97) % len(talk), qi: (index * 31) % len(b.Quiet)}
}

// Next returns the next frame's payload and its RFC 6464 extension byte. The payload is shared
// and must not be modified.
func (s *Source) Next() ([]byte, byte) {
	s.frames++
	var f Frame
	if s.floor.Talking(s.index) {
		s.talked++
		f = s.talk[s.ti]
		s.ti = (s.ti + 1) % len(s.talk)
	} else {
		f = s.quiet[s.qi]
		s.qi = (s.qi + 1) % len(s.quiet)
	}
	return f.Payload, f.ExtByte()
}

// Spoken is how many frames the source has produced and how many of them were speech.
func (s *Source) Spoken() (frames, talking uint64) { return s.frames, s.talked }
