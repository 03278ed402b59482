package audio

import "fmt"

// maxShared bounds the shared encoders a room keeps: one per distinct listener setting, and a
// client that keeps changing its bitrate must not make the room allocate an encoder per value.
const maxShared = 8

// DefaultHangover is how many ticks (200 ms) a listener who stopped contributing stays on its own
// encoder before moving back to the shared one; see Plan.
const DefaultHangover = 10

// Listener is one participant's outgoing stream: an encoder of its own, used while it talks, and
// the packet it gets this tick. Create it when the participant joins (the encoder is allocated
// then, not in the mixer loop).
type Listener struct {
	cfg   EncoderConfig
	own   *Encoder
	onOwn bool // this tick's packet came from own
	hang  int  // ticks left on own after the listener last contributed
	buf   [MaxPacket]byte
	pkt   []byte
}

// NewListener returns a listener whose stream is encoded with c in the room's format f.
func NewListener(f Format, c EncoderConfig) (*Listener, error) {
	enc, err := NewEncoder(f, c)
	if err != nil {
		return nil, err
	}
	return &Listener{cfg: c, own: enc}, nil
}

// Configure changes the listener's encoder settings (Janus's configure: bitrate, quality,
// expected_loss); from the next tick it shares the full mix with listeners of equal settings.
func (l *Listener) Configure(c EncoderConfig) error {
	if err := l.own.Configure(c); err != nil {
		return err
	}
	l.cfg = c
	return nil
}

// Packet is the Opus packet the listener gets this tick (nil before the first Encode). Several
// listeners may get the same slice: it is shared and read-only, valid until the next Encode.
func (l *Listener) Packet() []byte { return l.pkt }

// Own reports whether this tick's packet was encoded for this listener alone.
func (l *Listener) Own() bool { return l.onOwn }

type sharedEncoder struct {
	enc  *Encoder
	buf  [MaxPacket]byte
	pkt  []byte
	tick uint64 // the tick pkt was encoded for
}

// Plan encodes a room's tick for every listener with as few encodings as it can: listeners who
// contributed nothing (silent or muted) hear the full mix, so all of them with the same encoder
// settings get one shared packet; only talkers, who hear the mix without themselves, get an
// encoding each. Janus encodes once per participant; with a few talkers among a hundred listeners
// this is a few encodings instead of a hundred.
//
// Opus encoders carry state from frame to frame (SILK's LPC and pitch history, CELT's band energies
// and MDCT overlap), and a listener's decoder follows whichever encoder produced its last packet.
// Moving a listener between the shared encoder and its own is therefore a small discontinuity: the
// packets stay decodable (each is self-contained), and the mismatch in prediction state makes a
// brief artefact that decays within a few frames. Plan keeps the switches where they are least
// audible:
//
//   - shared to own happens on the tick the listener starts talking; its own encoder is reset first,
//     so it starts a clean stream rather than continuing one from an older talk spurt, and the
//     artefact falls under the listener's own voice, which it hears locally;
//   - own to shared happens only after the listener has been silent for the hangover: meanwhile
//     its own encoder encodes the full mix, the same input as the shared one, so by the switch both
//     have converged on the same recent signal and little mismatch is left. The hangover also keeps
//     a talker's short pauses from flapping between the two streams.
//
// A Plan is used by the mixer's goroutine only.
type Plan struct {
	f        Format
	hangover int
	shared   []*sharedEncoder // one per distinct EncoderConfig seen
	tick     uint64
	encoded  int // encodings done in the last Encode, for stats and benchmarks
}

// NewPlan returns a plan for a room of format f; hangover < 0 means DefaultHangover.
func NewPlan(f Format, hangover int) (*Plan, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if hangover < 0 {
		hangover = DefaultHangover
	}
	return &Plan{f: f, hangover: hangover}, nil
}

// Encodings is the number of Opus encodings the last Encode ran.
func (p *Plan) Encodings() int { return p.encoded }

// Encode encodes the tick m mixed for every listener; listeners[i] is source i of that Mix (nil
// for a source that listens to nothing, such as an announcement). A failed encoding leaves that
// listener without a packet this tick and is reported; the others are encoded.
func (p *Plan) Encode(m *Mixer, listeners []*Listener) error {
	p.tick++
	p.encoded = 0
	var bad error
	for i, l := range listeners {
		if l == nil {
			continue
		}
		if err := p.encodeFor(m, i, l); err != nil {
			l.pkt = nil
			bad = fmt.Errorf("audio: listener %d: %w", i, err)
		}
	}
	return bad
}

func (p *Plan) encodeFor(m *Mixer, i int, l *Listener) error {
	if m.Contributed(i) {
		if !l.onOwn {
			if err := l.own.Reset(); err != nil {
				return err
			}
		}
		l.onOwn, l.hang = true, p.hangover
	} else if l.onOwn {
		if l.hang == 0 {
			l.onOwn = false
		}
		l.hang = max(l.hang-1, 0)
	}
	if l.onOwn {
		n, err := l.own.Encode(m.MinusSelf(i), l.buf[:])
		if err != nil {
			return err
		}
		p.encoded++
		l.pkt = l.buf[:n]
		return nil
	}
	s, err := p.sharedFor(l.cfg)
	if err != nil {
		return err
	}
	if s.tick != p.tick {
		n, err := s.enc.Encode(m.Full(), s.buf[:])
		if err != nil {
			return err
		}
		p.encoded++
		s.pkt, s.tick = s.buf[:n], p.tick
	}
	l.pkt = s.pkt
	return nil
}

// sharedFor returns the shared encoder for settings c, creating it the first time they are seen
// (a room has few distinct settings; a linear scan beats a map here). Beyond maxShared, the
// encoder unused for longest is reconfigured for c.
func (p *Plan) sharedFor(c EncoderConfig) (*sharedEncoder, error) {
	var lru *sharedEncoder
	for _, s := range p.shared {
		if s.enc.Config() == c {
			return s, nil
		}
		if s.tick != p.tick && (lru == nil || s.tick < lru.tick) {
			lru = s
		}
	}
	if len(p.shared) >= maxShared && lru != nil {
		if err := lru.enc.Configure(c); err != nil {
			return nil, err
		}
		return lru, lru.enc.Reset()
	}
	enc, err := NewEncoder(p.f, c)
	if err != nil {
		return nil, err
	}
	s := &sharedEncoder{enc: enc}
	p.shared = append(p.shared, s)
	return s, nil
}
