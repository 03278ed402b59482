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
	g711  *G711Encoder // a G.711 listener's encoder (own is nil then)
	onOwn bool         // this tick's packet came from own
	hang  int          // ticks left on own after the listener last contributed
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

// NewG711Listener returns a listener whose stream is G.711 (law) of the room's format f. G.711
// keeps no prediction state and encodes a frame in about a microsecond, so a G.711 listener
// always gets its own encoding (of the full mix while it contributes nothing): sharing would save
// nothing worth the bookkeeping.
func NewG711Listener(f Format, law Law) (*Listener, error) {
	enc, err := NewG711Encoder(f, law)
	if err != nil {
		return nil, err
	}
	return &Listener{g711: enc}, nil
}

// Configure changes the listener's encoder settings (Janus's configure: bitrate, quality,
// expected_loss); from the next tick it shares the full mix with listeners of equal settings.
// G.711 has no settings: a G.711 listener keeps them and encodes as before.
func (l *Listener) Configure(c EncoderConfig) error {
	if l.g711 != nil {
		if err := c.validate(); err != nil {
			return err
		}
		l.cfg = c
		return nil
	}
	if err := l.own.Configure(c); err != nil {
		return err
	}
	l.cfg = c
	return nil
}

// Packet is the Opus (or G.711) packet the listener gets this tick (nil before the first Encode). Several
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
// Moving a listener between the shared encoder and its own is therefore a discontinuity: the
// packets stay decodable (each is self-contained), but the mismatch in prediction state makes an
// artefact that decays over a few frames. Plan makes both switches close to seamless:
//
//   - shared to own, on the tick the listener starts talking: its own encoder is reset and primed
//     with the last primeFrames full mixes (the signal the shared encoder just encoded for it),
//     output discarded, so its state is close to the one the listener's decoder followed. Priming
//     costs primeFrames encodings once per talk spurt.
//   - own to shared, only after the listener has been silent for the hangover: meanwhile its own
//     encoder encodes the full mix, the same input as the shared one, so by the switch both have
//     converged. The hangover also keeps a talker's short pauses from flapping between the two.
//
// TestPlanSwitches measures both against a listener that never switches (what Janus's
// one-encoder-per-listener sends): at 16 kHz, the first frame after switching onto the own encoder
// is about 20 dB above the difference (5.6 dB with a plain reset, 12 dB keeping the encoder's stale
// state), and the first frame back on the shared stream about 41 dB (6.5 dB without the hangover).
//
// A Plan is used by the mixer's goroutine only.
type Plan struct {
	f        Format
	hangover int
	shared   []*sharedEncoder // one per distinct EncoderConfig seen
	tick     uint64
	encoded  int // encodings done in the last Encode, for stats and benchmarks
	primed   int // of which priming a listener's own encoder

	// The last primeFrames full mixes, oldest at hist[histPos] once full: what listeners on the
	// shared stream have just been sent, to prime an encoder a listener switches onto.
	hist    [][]int16
	histLen int
	histPos int
	scratch [MaxPacket]byte
}

// primeFrames is how many recent full-mix frames (100 ms) a listener's own encoder encodes, output
// discarded, when the listener moves onto it: enough for libopus's prediction state to settle on
// the signal the listener's decoder has been following.
const primeFrames = 5

// NewPlan returns a plan for a room of format f; hangover < 0 means DefaultHangover.
func NewPlan(f Format, hangover int) (*Plan, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if hangover < 0 {
		hangover = DefaultHangover
	}
	p := &Plan{f: f, hangover: hangover, hist: make([][]int16, primeFrames)}
	for i := range p.hist {
		p.hist[i] = make([]int16, f.FrameLen())
	}
	return p, nil
}

// Encodings is the number of packets the last Encode encoded (priming runs not included).
func (p *Plan) Encodings() int { return p.encoded }

// Primings is the number of frames the last Encode encoded only to prime encoders listeners moved
// onto (primeFrames per listener who started talking).
func (p *Plan) Primings() int { return p.primed }

// Encode encodes the tick m mixed for every listener; listeners[i] is source i of that Mix (nil
// for a source that listens to nothing, such as an announcement). A failed encoding leaves that
// listener without a packet this tick and is reported; the others are encoded.
func (p *Plan) Encode(m *Mixer, listeners []*Listener) error {
	p.tick++
	p.encoded, p.primed = 0, 0
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
	copy(p.hist[p.histPos], m.Full())
	p.histPos = (p.histPos + 1) % len(p.hist)
	p.histLen = min(p.histLen+1, len(p.hist))
	return bad
}

// prime resets enc and runs it over the recent full mixes, so its state is close to the shared
// encoder's whose packets the listener's decoder has been following.
func (p *Plan) prime(enc *Encoder) error {
	if err := enc.Reset(); err != nil {
		return err
	}
	for k := len(p.hist) - p.histLen; k < len(p.hist); k++ {
		if _, err := enc.Encode(p.hist[(p.histPos+k)%len(p.hist)], p.scratch[:]); err != nil {
			return err
		}
		p.primed++
	}
	return nil
}

func (p *Plan) encodeFor(m *Mixer, i int, l *Listener) error {
	if l.g711 != nil {
		return p.encodeG711(m, i, l)
	}
	if m.Contributed(i) {
		if !l.onOwn {
			if err := p.prime(l.own); err != nil {
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

// encodeG711 encodes a G.711 listener's packet: what everyone else said, which is the full mix
// while it contributes nothing.
func (p *Plan) encodeG711(m *Mixer, i int, l *Listener) error {
	mix := m.Full()
	if m.Contributed(i) {
		mix = m.MinusSelf(i)
	}
	n, err := l.g711.Encode(mix, l.buf[:])
	if err != nil {
		return err
	}
	p.encoded++
	l.onOwn, l.pkt = true, l.buf[:n]
	return nil
}
