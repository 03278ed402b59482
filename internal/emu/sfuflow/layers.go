package sfuflow

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/media"
)

// inFlightMargin: packets that reach the receiver this close to the session's end are left out
// of sent and lost, as the simulator leaves out packets sent in the last 500 ms of the run.
const inFlightMargin = 500 * time.Millisecond

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
	started bool
	base    int64    // extended sequence number of slots[0]
	slots   []uint16 // per sequence number from base
	bounds  []boundary
	cut     time.Duration // arrivals after this are in flight at the end
	cutSeq  int64         // highest sequence number received by cut
	unknown int           // keyframes of a resolution no layer has
}

func newLayerCounter(resolutions [][2]int, cut time.Duration) *layerCounter {
	c := &layerCounter{layerOf: map[[2]int]int{}, layers: len(resolutions), cut: cut, cutSeq: -1}
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
	if !c.started {
		c.started, c.base = true, int64(h.Seq)+1<<16 // room below for late packets
		c.slots = make([]uint16, 0, 1<<14)
	}
	last := c.base + int64(len(c.slots)) - 1
	ext := last + int64(int16(h.Seq-uint16(last)))
	i := ext - c.base
	if i < 0 || i > 1<<24 {
		return 0
	}
	for int64(len(c.slots)) <= i {
		c.slots = append(c.slots, slotMissing)
	}
	if now <= c.cut {
		c.cutSeq = max(c.cutSeq, ext)
	}
	if len(payload) == 0 {
		c.slots[i] = slotPadding
		return 0
	}
	c.slots[i] = uint16(min(len(payload), slotPadding-2) + 1)
	if w, h, ok := vp8KeyframeSize(payload); ok {
		if l, ok := c.layerOf[[2]int{w, h}]; ok {
			c.bounds = append(c.bounds, boundary{seq: ext, layer: l})
		} else {
			c.unknown++
		}
	}
	return len(payload)
}

// summary is the session's metrics.SessionSummary: per layer, packets sent by the SFU and lost
// (up to the in-flight margin), PER, and goodput (media payload over the session's active time).
func (c *layerCounter) summary(name string, active time.Duration) metrics.SessionSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := make([]int64, c.layers)
	recv := make([]int64, c.layers)
	good := make([]int64, c.layers)
	bounds := slices.Clone(c.bounds)
	slices.SortStableFunc(bounds, func(a, b boundary) int { return int(a.seq - b.seq) })
	b, layer := 0, -1
	for i, s := range c.slots {
		seq := c.base + int64(i)
		for b < len(bounds) && bounds[b].seq <= seq {
			layer = bounds[b].layer
			b++
		}
		if layer < 0 || s == slotPadding {
			continue // before the first keyframe, or a probe
		}
		if s != slotMissing {
			good[layer] += int64(s - 1)
		}
		if seq > c.cutSeq {
			continue
		}
		sent[layer]++
		if s != slotMissing {
			recv[layer]++
		}
	}
	out := metrics.SessionSummary{Name: name}
	for l := range c.layers {
		ls := metrics.LayerSummary{Layer: l + 1, Sent: sent[l], Lost: sent[l] - recv[l]}
		if sent[l] > 0 {
			per := math.Round(float64(ls.Lost)/float64(sent[l])*1e6) / 1e6
			ls.PER = &per
		}
		if active > 0 {
			ls.GoodputBps = math.Round(float64(good[l]) * 8 / active.Seconds())
		}
		out.Layers = append(out.Layers, ls)
	}
	return out
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
