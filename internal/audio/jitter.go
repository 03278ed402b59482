package audio

// DefaultPrebuffer is Janus's default_prebuffering: packets held before a participant joins the mix.
const DefaultPrebuffer = 6

// MaxPrebuffer is the largest prebuffer Janus accepts.
const MaxPrebuffer = 50

// resyncSpan is how far (in packets, beyond the ring) a sequence number may jump backwards before
// the buffer takes it for a restarted stream rather than a late packet.
const resyncSpan = 64

// PushResult says what the jitter buffer did with a packet.
type PushResult uint8

const (
	Queued    PushResult = iota // kept for playout
	Late                        // its frame was already played or concealed: dropped
	Duplicate                   // already queued: dropped
	TooLarge                    // payload over MaxPacket: dropped
	Empty                       // no payload: dropped
)

// FrameKind is what the jitter buffer has for a mixer tick.
type FrameKind uint8

const (
	// NoFrame: nothing to play (still prebuffering, or the participant stopped sending); the
	// participant contributes nothing this tick and no concealment is due.
	NoFrame FrameKind = iota
	// Packet: the next packet in sequence, to decode.
	Packet
	// Lost: the next packet is missing but later ones are queued; conceal the frame, from FEC when
	// the frame carries the following packet, by PLC otherwise.
	Lost
)

// Frame is the jitter buffer's answer for one tick. Payload and FEC stay valid until the next Pull.
type Frame struct {
	Kind    FrameKind
	Seq     uint16
	TS      uint32
	Payload []byte // Kind == Packet: the packet to decode
	FEC     []byte // Kind == Lost: the packet right after the lost frame, whose FEC data covers it; nil if not queued
}

// JitterStats counts what the buffer dropped or concealed since it was created.
type JitterStats struct {
	Queued, Played, Lost      uint64
	Late, Duplicates, Invalid uint64 // refused on arrival
	Overflow                  uint64 // dropped oldest because the participant sent faster than the mix plays
	Resyncs                   uint64 // sequence jumps taken as a restarted stream
	Underruns                 uint64 // ran dry while playing (back to prebuffering)
}

type slot struct {
	used bool
	seq  uint16
	ts   uint32
	n    int
	data [MaxPacket]byte
}

// Jitter is one participant's jitter buffer: it orders packets by RTP sequence number, holds
// Prebuffer packets before the participant joins the mix (Janus's prebuffering, which ends once
// more than Prebuffer packets are queued), hands out one 20 ms frame per tick, says when a frame is
// missing, and when twice Prebuffer packets are queued drops the oldest down to Prebuffer (Janus's
// rule for a participant who sends too fast; at least two packets of slack above Prebuffer, so a
// prebuffer of 1 still absorbs a burst). Slots are a fixed ring, so Push and Pull never allocate.
//
// Ordering is by sequence number; timestamps decide whether a queued packet directly follows a
// lost frame (only then does its FEC data cover it), and a timestamp jump between consecutive
// sequence numbers (DTX, a paused sender) is not loss. Not safe for concurrent use.
type Jitter struct {
	ring      []slot
	mask      uint64
	frameTS   uint32 // RTP timestamp units per frame: 960 for Opus, 160 for G.711
	prebuffer int
	started   bool   // a packet was seen: next and highest are meaningful
	playing   bool   // prebuffering is over
	next      uint64 // extended sequence number of the next frame to play
	floor     uint64 // frames below were played or concealed: never queued again
	highest   uint64 // highest extended sequence number seen
	count     int
	lastTS    uint32 // timestamp of the last frame played or concealed
	havePlay  bool
	out, fec  [MaxPacket]byte
	stats     JitterStats
}

// NewJitter returns a buffer that prebuffers prebuffer packets (clamped to 0..MaxPrebuffer) of
// frames advancing the RTP timestamp by frameTS.
func NewJitter(prebuffer int, frameTS uint32) *Jitter {
	prebuffer = min(max(prebuffer, 0), MaxPrebuffer)
	size := 8
	for size < 2*max(prebuffer, 1)+2 {
		size *= 2
	}
	return &Jitter{ring: make([]slot, size), mask: uint64(size - 1), frameTS: frameTS, prebuffer: prebuffer}
}

// Stats returns the counters.
func (j *Jitter) Stats() JitterStats { return j.stats }

// Len is the number of queued packets.
func (j *Jitter) Len() int { return j.count }

// Prebuffering reports whether the buffer is still filling before playout.
func (j *Jitter) Prebuffering() bool { return !j.playing }

// Reset empties the buffer and starts prebuffering again; counters are kept.
func (j *Jitter) Reset() {
	for i := range j.ring {
		j.ring[i].used = false
	}
	j.count, j.started, j.playing, j.havePlay = 0, false, false, false
}

// extend places a 16-bit sequence number on the extended line next to the highest one seen.
func (j *Jitter) extend(seq uint16) uint64 {
	delta := int64(int16(seq - uint16(j.highest)))
	return uint64(int64(j.highest) + delta) // highest >= 1<<16, so never negative
}

// Push queues a copy of payload, the packet with RTP sequence number seq and timestamp ts.
func (j *Jitter) Push(seq uint16, ts uint32, payload []byte) PushResult {
	switch {
	case len(payload) == 0:
		j.stats.Invalid++
		return Empty
	case len(payload) > MaxPacket:
		j.stats.Invalid++
		return TooLarge
	}
	if !j.started {
		j.restart(seq)
	}
	ext := j.extend(seq)
	if ext < j.next && ext >= j.floor && !j.playing && j.highest-ext < uint64(len(j.ring)) {
		j.next = ext // reordered while prebuffering, and not played before
	}
	if ext < j.next {
		if j.next-ext > uint64(len(j.ring))+resyncSpan {
			j.stats.Resyncs++
			j.Reset()
			j.restart(seq)
			ext = j.extend(seq)
		} else {
			j.stats.Late++
			return Late
		}
	}
	// A packet beyond the ring's window pushes the oldest frames out.
	for ext >= j.next+uint64(len(j.ring)) {
		if j.count == 0 {
			j.next = ext // nothing queued in between to wait for
			break
		}
		j.dropOldest()
	}
	s := &j.ring[ext&j.mask]
	if s.used {
		j.stats.Duplicates++
		return Duplicate
	}
	s.used, s.seq, s.ts, s.n = true, seq, ts, copy(s.data[:], payload)
	j.count++
	j.stats.Queued++
	j.highest = max(j.highest, ext)
	j.bound()
	return Queued
}

// restart starts a new sequence line at seq; ext numbers start at 1<<16 so they never underflow.
func (j *Jitter) restart(seq uint16) {
	j.started = true
	j.highest = 1<<16 + uint64(seq)
	j.next = j.highest
	j.floor = 0
}

// bound applies the prebuffering and the queue limit after a packet was queued.
func (j *Jitter) bound() {
	if !j.playing {
		if j.count > j.prebuffer {
			j.playing = true
			j.skipToOldest()
		}
		return
	}
	p := max(j.prebuffer, 1)
	if j.count >= max(2*p, p+2) {
		for j.count > p {
			j.dropOldest()
		}
	}
}

// skipToOldest moves next to the oldest queued packet: frames before it were never received while
// the buffer was not playing, so there is nothing to conceal.
func (j *Jitter) skipToOldest() {
	for j.count > 0 && !j.ring[j.next&j.mask].used {
		j.next++
	}
}

// dropOldest discards the frame at next (queued or not) and moves on.
func (j *Jitter) dropOldest() {
	s := &j.ring[j.next&j.mask]
	if s.used {
		s.used = false
		j.count--
		j.stats.Overflow++
	}
	j.next++
	j.skipToOldest()
}

// Pull returns what to play for one tick.
func (j *Jitter) Pull() Frame {
	if !j.playing {
		return Frame{}
	}
	if j.count == 0 {
		// Ran dry: the participant stopped sending or its packets are late; prebuffer again
		// rather than concealing indefinitely.
		j.playing = false
		j.stats.Underruns++
		return Frame{}
	}
	s := &j.ring[j.next&j.mask]
	seq := uint16(j.next)
	j.next++
	j.floor = j.next
	if s.used {
		s.used = false
		j.count--
		j.stats.Played++
		j.lastTS, j.havePlay = s.ts, true
		n := copy(j.out[:], s.data[:s.n])
		return Frame{Kind: Packet, Seq: s.seq, TS: s.ts, Payload: j.out[:n]}
	}
	j.stats.Lost++
	f := Frame{Kind: Lost, Seq: seq}
	if j.havePlay {
		f.TS = j.lastTS + j.frameTS
		j.lastTS = f.TS
	}
	// FEC in the following packet covers the frame just before it, so it is usable only when that
	// packet is queued and its timestamp directly follows the lost frame's.
	nx := &j.ring[j.next&j.mask]
	if nx.used && (!j.havePlay || nx.ts == f.TS+j.frameTS) {
		n := copy(j.fec[:], nx.data[:nx.n])
		f.FEC = j.fec[:n]
	}
	return f
}
