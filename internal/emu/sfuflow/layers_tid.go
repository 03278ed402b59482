package sfuflow

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sim"
)

// Per received media packet, what its descriptor and header say (tidCounter.meta).
const (
	metaTID    = 0x03 // the temporal layer (TID ≥ 3 counts in the top layer)
	metaStart  = 0x04 // the first packet of a frame
	metaMarker = 0x08 // the last packet of a frame (RTP marker)
	metaMedia  = 0x10 // a media packet was received in this slot
	metaTL0    = 0x20 // the packet carries a TL0PICIDX (tidCounter.tl0)
)

// tidCounter counts what one subscriber receives of a temporal-layered stream, per temporal
// layer, by the TID in each packet's VP8 payload descriptor (read after SRTP, as the subscriber
// gets it). The SFU renumbers what it forwards without holes, so a sequence number that never
// arrived is a lost packet; its layer is that of the frame it falls in: the frame of the packet
// before it when that frame had not ended, else the frame of the packet after it when that
// frame had begun earlier, else (whole frames lost) the base layer if the TL0PICIDX says a base
// frame was among them (RFC 7741: it counts the base frames), or the layer of the frame after
// them.
type tidCounter struct {
	layers int

	mu   sync.Mutex
	seqs seqWindow
	meta []uint8 // per slot of seqs
	tl0  []uint8 // per slot of seqs: the TL0PICIDX, when metaTL0
}

func newTIDCounter(layers int) *tidCounter { return &tidCounter{layers: layers} }

// observe takes one received RTP packet at time now and returns its media payload size (0 for
// padding or a packet it cannot read).
func (c *tidCounter) observe(pkt []byte, now time.Duration) int {
	h, ok := media.ParseRTP(pkt)
	if !ok {
		return 0
	}
	payload := pkt[h.PayloadStart:h.PayloadEnd]
	c.mu.Lock()
	defer c.mu.Unlock()
	i, _, ok := c.seqs.add(h.Seq, now)
	if !ok {
		return 0
	}
	for len(c.meta) < len(c.seqs.slots) {
		c.meta = append(c.meta, 0)
		c.tl0 = append(c.tl0, 0)
	}
	if len(payload) == 0 {
		return 0
	}
	f, ok := media.ParseVP8(payload)
	if !ok {
		return 0
	}
	c.seqs.setSize(i, len(payload))
	m := uint8(metaMedia) | uint8(min(max(int(f.TID), 0), c.layers-1))&metaTID
	if f.Start {
		m |= metaStart
	}
	if h.Marker {
		m |= metaMarker
	}
	if f.TL0Pos > 0 {
		m |= metaTL0
		c.tl0[i] = payload[f.TL0Pos]
	}
	c.meta[i] = m
	return len(payload)
}

// gapLayers gives every slot the layer it counts in (-1: padding, or before the first media
// packet).
func (c *tidCounter) gapLayers() []int8 {
	out := make([]int8, len(c.meta))
	next := int8(-1) // the layer a whole lost frame counts in: the next frame's
	nextStarted := false
	for i := len(c.meta) - 1; i >= 0; i-- { // backwards: each gap learns what follows it
		m := c.meta[i]
		switch {
		case m&metaMedia != 0:
			out[i] = int8(m & metaTID)
			next, nextStarted = out[i], m&metaStart != 0
		case c.seqs.slots[i] == slotPadding:
			out[i] = -1
		case !nextStarted:
			out[i] = next // inside the next frame
		default:
			out[i] = -2 // decided forwards below
		}
	}
	prev, prevEnded := -1, true
	for i, m := range c.meta {
		switch {
		case m&metaMedia != 0:
			prev, prevEnded = i, m&metaMarker != 0
		case out[i] == -2 && !prevEnded:
			out[i] = int8(c.meta[prev] & metaTID)
		case out[i] == -2:
			out[i] = c.lostFramesLayer(prev, i)
		}
	}
	return out
}

// lostFramesLayer is the layer of whole frames lost after slot prev (-1: none) and before the
// first media packet after slot i: the base layer when the TL0PICIDX went up by more than the
// next frame accounts for, else the next frame's layer.
func (c *tidCounter) lostFramesLayer(prev, i int) int8 {
	for j := i + 1; j < len(c.meta); j++ {
		m := c.meta[j]
		if m&metaMedia == 0 {
			continue
		}
		if prev >= 0 && c.meta[prev]&m&metaTL0 != 0 {
			step := c.tl0[j] - c.tl0[prev] // uint8: wraps as the field does
			if m&metaTID == 0 {
				step-- // the next frame is a base frame itself
			}
			if step > 0 && step < 128 {
				return 0
			}
		}
		return int8(m & metaTID)
	}
	return -1
}

// stats fills the simulator's per-layer counters with what arrived (see layerCounter.stats for
// the times): a packet counts in its layer, a lost one in the layer of its frame; an interval's
// forwarded layers are the highest TID received in it, plus one.
func (c *tidCounter) stats(name, policy string, bins int, interval time.Duration) *sim.SessionStats {
	st := sim.NewSessionStats(name, policy, c.layers, bins, interval)
	c.mu.Lock()
	defer c.mu.Unlock()
	layers := c.gapLayers()
	var at time.Duration
	bin, top := -1, -1
	for i, s := range c.seqs.slots {
		if s != slotMissing {
			at = c.seqs.arrivals[i]
		}
		l := int(layers[i])
		if l < 0 {
			continue
		}
		st.CountSent(at, l)
		if s == slotMissing {
			continue
		}
		st.CountReceived(at, at, l, int(s-1))
		if b := int(at / interval); b != bin {
			bin, top = b, -1
		}
		top = max(top, l)
		st.SetForwarded(at, top+1)
	}
	return st
}

// current is the number of layers received over the last second before the newest packet (0
// before the first).
func (c *tidCounter) current() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	top, newest := -1, time.Duration(-1)
	for i := len(c.meta) - 1; i >= 0; i-- {
		if c.meta[i]&metaMedia == 0 {
			continue
		}
		at := c.seqs.arrivals[i]
		if newest < 0 {
			newest = at
		}
		if newest-at > time.Second {
			break
		}
		top = max(top, int(c.meta[i]&metaTID))
	}
	return top + 1
}
