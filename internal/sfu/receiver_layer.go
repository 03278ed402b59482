package sfu

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// receiverLayer is one stream of a receiver (a simulcast layer, or the only stream): its packet
// cache, rate meter, keyframe state, and what its read goroutine uses alone.
type receiverLayer struct {
	ssrc   atomic.Uint32
	active atomic.Bool
	lastAt atomic.Int64 // when the newest packet arrived
	cache  *media.Cache
	meter  rateMeter

	// writing is set while a packet of the layer is being taken: the fields below belong to one
	// goroutine at a time, and a second one (a plugin bug, or a remote peer making Pion start a
	// second reader of the layer) must be refused rather than race on them.
	writing atomic.Bool

	// Used only by the goroutine that holds writing.
	w *layerWriting
	// pkt is the packet being delivered.
	pkt Packet

	kfMu        sync.Mutex
	kfRequested bool
	kfAt        time.Duration
	lastKF      atomic.Int64
}

// layerWriting is what the goroutine delivering a layer's packets uses alone, allocated at the
// layer's first packet: the 8 kB of it stay out of layers nobody sends (the upper layers of an
// audio or SVC stream, a simulcast layer the publisher leaves out).
type layerWriting struct {
	dd media.DDParser
	// seen holds, per slot, 1 + the newest sequence number received in it, for recognising
	// duplicates; seenSSRC is the stream it describes.
	seen     [seenSlots]uint32
	seenSSRC uint32
	// out is what the sinks of this package send the layer's packets with.
	out sendBuffer
}

// writingState returns the layer's writing state, allocating it at the first packet; the caller holds
// l.writing.
func (l *receiverLayer) writingState() *layerWriting {
	if l.w == nil {
		l.w = new(layerWriting)
	}
	return l.w
}

// seenSlots is how many recent sequence numbers a layer remembers to recognise duplicates.
const seenSlots = 1024

// duplicate reports whether the layer already received this packet, and remembers it otherwise.
// A new SSRC (the publisher restarted the stream) forgets the old numbers.
func (w *layerWriting) duplicate(h *media.Header) bool {
	if h.SSRC != w.seenSSRC {
		w.seen, w.seenSSRC = [seenSlots]uint32{}, h.SSRC
	}
	slot := &w.seen[h.Seq&(seenSlots-1)]
	if *slot == uint32(h.Seq)+1 {
		return true
	}
	*slot = uint32(h.Seq) + 1
	return false
}

// arrived records that a valid packet of the layer arrived.
func (l *receiverLayer) arrived(ssrc uint32, now time.Duration) {
	if l.ssrc.Load() == 0 {
		l.ssrc.Store(ssrc)
	}
	l.active.Store(true)
	l.lastAt.Store(int64(now))
}

// SetLayerSSRC records the publisher's SSRC of a layer (for keyframe requests).
func (r *Receiver) SetLayerSSRC(layer int, ssrc uint32) {
	if layer >= 0 && layer < len(r.layers) {
		r.layers[layer].ssrc.Store(ssrc)
	}
}

// LayerSSRC returns the publisher's SSRC of a layer (0 when unknown).
func (r *Receiver) LayerSSRC(layer int) uint32 {
	if layer < 0 || layer >= len(r.layers) {
		return 0
	}
	return r.layers[layer].ssrc.Load()
}

func (r *Receiver) keyframeArrived(l *receiverLayer, now time.Duration) {
	r.keyframes.Add(1)
	l.lastKF.Store(int64(now))
	l.kfMu.Lock()
	l.kfRequested = false
	l.kfMu.Unlock()
}

// RequestKeyframe asks the publisher for a keyframe on a layer, at most once per
// max(2 × RTT, KeyframeInterval) while none arrives. It reports whether a request went out.
func (r *Receiver) RequestKeyframe(layer int, now time.Duration) bool {
	if layer < 0 || layer >= len(r.layers) || !r.cfg.Codec.IsVideo() {
		return false
	}
	l := &r.layers[layer]
	gap := max(2*time.Duration(r.rtt.Load()), r.cfg.KeyframeInterval)
	l.kfMu.Lock()
	if l.kfRequested && now-l.kfAt < gap {
		l.kfMu.Unlock()
		return false
	}
	l.kfRequested, l.kfAt = true, now
	l.kfMu.Unlock()
	r.kfRequests.Add(1)
	if r.requestKF != nil {
		r.requestKF(layer, l.ssrc.Load())
	}
	return true
}

// LastKeyframe is when the last keyframe of a layer arrived (ok false if none did).
func (r *Receiver) LastKeyframe(layer int) (time.Duration, bool) {
	if layer < 0 || layer >= len(r.layers) {
		return 0, false
	}
	at := r.layers[layer].lastKF.Load()
	return time.Duration(at), at != 0
}

// layerStale: a simulcast layer that sent nothing for this long is considered paused by the
// publisher (browsers stop their top layers when their own bandwidth is short); selectors then
// fall back to the best layer still flowing.
const layerStale = 500 * time.Millisecond

// layerFlowing reports whether a layer received a packet within layerStale of now.
func (r *Receiver) layerFlowing(layer int, now time.Duration) bool {
	if layer < 0 || layer >= len(r.layers) || !r.layers[layer].active.Load() {
		return false
	}
	return now-time.Duration(r.layers[layer].lastAt.Load()) < layerStale
}

// cached copies a cached packet of a layer into dst.
func (r *Receiver) cached(layer int, seq uint16, dst []byte) int {
	if layer < 0 || layer >= len(r.layers) {
		return 0
	}
	n, _ := r.layers[layer].cache.Get(seq, dst)
	return n
}

// Cached copies the cached packet seq of a layer into dst and returns its length (0: not in the
// cache). The cluster relay answers another node's NACKs with it, as a DownTrack answers its
// subscriber's.
func (r *Receiver) Cached(layer int, seq uint16, dst []byte) int { return r.cached(layer, seq, dst) }
