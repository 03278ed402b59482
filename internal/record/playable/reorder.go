package playable

import "time"

// Reordering bounds: a packet is held until packets that arrived ReorderDelay after it came, or
// until MaxHeld are held. A packet later than that is dropped (counted): its place was passed.
const (
	ReorderDelay = 500 * time.Millisecond
	MaxHeld      = 1024
)

// heldPacket is a packet waiting in the window, its bytes copied.
type heldPacket struct {
	seq int64 // extended sequence number
	at  time.Duration
	b   []byte
}

// reorder puts one stream's packets back in order by extended sequence number.
type reorder struct {
	started bool
	highest int64 // highest extended sequence number seen
	last    int64 // the one released last
	emitted bool
	held    []heldPacket // in order of seq
	free    [][]byte     // buffers of released packets, reused
}

// extend turns a 16-bit sequence number into one that does not wrap, near the highest seen.
func (r *reorder) extend(seq uint16) int64 {
	if !r.started {
		r.started, r.highest = true, int64(seq)
		return r.highest
	}
	s := r.highest + int64(int16(seq-uint16(r.highest)))
	r.highest = max(r.highest, s)
	return s
}

// add holds a copy of pkt in its place; false if it is too late or a copy of one held or released.
func (r *reorder) add(seq uint16, pkt []byte, at time.Duration) bool {
	s := r.extend(seq)
	if r.emitted && s <= r.last {
		return false
	}
	i := len(r.held)
	for i > 0 && r.held[i-1].seq > s {
		i--
	}
	if i > 0 && r.held[i-1].seq == s {
		return false
	}
	var b []byte
	if n := len(r.free); n > 0 {
		b, r.free = r.free[n-1][:0], r.free[:n-1]
	}
	b = append(b, pkt...)
	r.held = append(r.held, heldPacket{})
	copy(r.held[i+1:], r.held[i:])
	r.held[i] = heldPacket{seq: s, at: at, b: b}
	return true
}

// ready says whether the oldest held packet must go: the window is full, or packets arrived long
// enough after it (now is the latest arrival).
func (r *reorder) ready(now time.Duration) bool {
	if len(r.held) == 0 {
		return false
	}
	return len(r.held) > MaxHeld || now-r.held[0].at > ReorderDelay
}

// pop releases the oldest held packet; gap says packets are missing before it. Its bytes stay the
// caller's until it gives them back with recycle (a depacketizer may hold on to a fragment).
func (r *reorder) pop() (p heldPacket, gap bool) {
	p = r.held[0]
	copy(r.held, r.held[1:])
	r.held = r.held[:len(r.held)-1]
	gap = r.emitted && p.seq != r.last+1
	r.emitted, r.last = true, p.seq
	return p, gap
}

// recycle takes back the bytes of released packets, for packets to come.
func (r *reorder) recycle(bufs [][]byte) { r.free = append(r.free, bufs...) }

// restart forgets the numbering (a new SSRC, or a stream resumed elsewhere); held packets stay.
func (r *reorder) restart() { r.started = false }
