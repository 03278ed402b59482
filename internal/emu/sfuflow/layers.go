package sfuflow

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sim"
)

// Per sequence number, what arrived: nothing, padding, or media of size-1 payload bytes.
const (
	slotMissing = 0
	slotPadding = math.MaxUint16
)

// boundary: from sequence number seq on, the SFU forwards layer.
type boundary struct {
	seq   int64
	layer int
}

// layerCounter counts what one subscriber receives, per simulcast layer. The SFU gives the
// subscriber one stream numbered without holes (strata's rewriter removes the holes of what it
// does not forward), so every sequence number between the first and the last received is a
// packet the SFU sent. It switches layers only at a keyframe of the new layer, and each layer
// has its own resolution, which a VP8 keyframe carries: the packets from one keyframe to the
// next belong to the keyframe's layer. A sequence number that never arrived is a lost packet of
// the layer around it; a lost probe (padding) packet cannot be told apart and counts too.
type layerCounter struct {
	layerOf map[[2]int]int // resolution → layer (0 = base)
	layers  int

	mu      sync.Mutex
	seqs    seqWindow
	bounds  []boundary
	unknown int // keyframes of a resolution no layer has
}

// seqWindow keeps, per extended sequence number of one stream from the first received on, what
// arrived (a size, padding or nothing) and when.
type seqWindow struct {
	started  bool
	base     int64           // extended sequence number of slots[0]
	slots    []uint16        // per sequence number from base
	arrivals []time.Duration // per sequence number from base (0 when missing)
}

// add records a packet with sequence number seq arriving at now, and returns its slot and
// extended sequence number (ok false for one too old or too far ahead to keep). The slot is
// marked padding until the caller sets its size.
func (w *seqWindow) add(seq uint16, now time.Duration) (i, ext int64, ok bool) {
	if !w.started {
		w.started, w.base = true, int64(seq)+1<<16 // room below for late packets
		w.slots = make([]uint16, 0, 1<<14)
		w.arrivals = make([]time.Duration, 0, 1<<14)
	}
	last := w.base + int64(len(w.slots)) - 1
	ext = last + int64(int16(seq-uint16(last)))
	i = ext - w.base
	if i < 0 || i > 1<<24 {
		return 0, 0, false
	}
	for int64(len(w.slots)) <= i {
		w.slots = append(w.slots, slotMissing)
		w.arrivals = append(w.arrivals, 0)
	}
	w.arrivals[i] = now
	w.slots[i] = slotPadding
	return i, ext, true
}

// setSize records the media payload size of slot i.
func (w *seqWindow) setSize(i int64, size int) { w.slots[i] = uint16(min(size, slotPadding-2) + 1) }

func newLayerCounter(resolutions [][2]int) *layerCounter {
	c := &layerCounter{layerOf: map[[2]int]int{}, layers: len(resolutions)}
	for i, r := range resolutions {
		c.layerOf[r] = i
	}
	return c
}

// observe takes one received RTP packet at time now and returns its media payload size (0 for
// padding or a packet it cannot read).
func (c *layerCounter) observe(pkt []byte, now time.Duration) int {
	h, ok := media.ParseRTP(pkt)
	if !ok {
		return 0
	}
	payload := pkt[h.PayloadStart:h.PayloadEnd]
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ext, ok := c.seqs.add(h.Seq, now)
	if !ok || len(payload) == 0 {
		return 0
	}
	c.seqs.setSize(i, len(payload))
	if w, h, ok := vp8KeyframeSize(payload); ok {
		if l, ok := c.layerOf[[2]int{w, h}]; ok {
			c.bounds = append(c.bounds, boundary{seq: ext, layer: l})
		} else {
			c.unknown++
		}
	}
	return len(payload)
}

// stats fills the simulator's per-layer counters (sim.SessionStats) with what arrived, so that
// metrics summarises both engines' sessions with the same code. The receiver does not know when
// the SFU sent a packet: a packet counts as sent when it arrived, a lost one when the packet
// before it arrived (the path's one-way delay earlier than the simulator counts it).
func (c *layerCounter) stats(name, policy string, bins int, interval time.Duration) *sim.SessionStats {
	st := sim.NewSessionStats(name, policy, c.layers, bins, interval)
	c.mu.Lock()
	defer c.mu.Unlock()
	bounds := slices.Clone(c.bounds)
	slices.SortStableFunc(bounds, func(a, b boundary) int { return int(a.seq - b.seq) })
	b, layer := 0, -1
	var at time.Duration
	for i, s := range c.seqs.slots {
		seq := c.seqs.base + int64(i)
		for b < len(bounds) && bounds[b].seq <= seq {
			layer = bounds[b].layer
			b++
		}
		if s != slotMissing {
			at = c.seqs.arrivals[i]
		}
		if layer < 0 || s == slotPadding {
			continue // before the first keyframe, or a probe
		}
		st.SetForwarded(at, layer+1) // the last packet of each interval says what it forwards
		st.CountSent(at, layer)
		if s != slotMissing {
			st.CountReceived(at, at, layer, int(s-1))
		}
	}
	return st
}

// vp8KeyframeSize reads the width and height of a VP8 keyframe from the first packet of a frame
// (RFC 7741: payload descriptor, then the VP8 payload header; RFC 6386 9.1: a keyframe's
// 3-byte tag, start code 9d 01 2a, 14-bit width and height).
func vp8KeyframeSize(p []byte) (w, h int, ok bool) {
	f, ok := media.ParseVP8(p)
	if !ok || !f.Keyframe {
		return 0, 0, false
	}
	i := vp8DescriptorLen(p)
	if i < 0 || len(p) < i+10 || p[i+3] != 0x9d || p[i+4] != 0x01 || p[i+5] != 0x2a {
		return 0, 0, false
	}
	w = int(binary.LittleEndian.Uint16(p[i+6:]) & 0x3fff)
	h = int(binary.LittleEndian.Uint16(p[i+8:]) & 0x3fff)
	return w, h, true
}

// vp8DescriptorLen is the length of the VP8 payload descriptor at the start of p (-1 if p is
// shorter than it says).
func vp8DescriptorLen(p []byte) int {
	if len(p) < 1 {
		return -1
	}
	i := 1
	if p[0]&0x80 == 0 {
		return i
	}
	if len(p) < 2 {
		return -1
	}
	x := p[1]
	i++
	if x&0x80 != 0 { // picture id, 7 or 15 bits
		if len(p) <= i {
			return -1
		}
		if p[i]&0x80 != 0 {
			i++
		}
		i++
	}
	if x&0x40 != 0 { // TL0PICIDX
		i++
	}
	if x&0x30 != 0 { // TID/Y/KEYIDX
		i++
	}
	if i > len(p) {
		return -1
	}
	return i
}

// current is the layer (1 = base) of the newest keyframe received, 0 before the first.
func (c *layerCounter) current() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bounds) == 0 {
		return 0
	}
	return c.bounds[len(c.bounds)-1].layer + 1
}
