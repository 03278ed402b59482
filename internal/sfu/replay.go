package sfu

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
)

// Keyframe replay (Janus's videobufferkf): a sink added with AddSinkFromKeyframe first gets the
// packets of the stream from its newest keyframe on, out of the packet cache, then the live ones.
// A new viewer of a source that cannot be asked for a keyframe (plain RTP without an RTCP port)
// sees a picture at once instead of waiting for the next periodic keyframe. The replay runs on
// the layer's own goroutine, at its next packet, so it shares the layer's buffers safely and the
// sink sees one ordered stream.

// replayState is what a single-stream receiver keeps for replays (layer 0's goroutine only, but
// for pending, which any goroutine appends to).
type replayState struct {
	mu      sync.Mutex
	pending []Sink
	waiting atomic.Bool // pending is not empty: the media path looks at this, not the lock

	kfSeq   uint16 // sequence number of the newest keyframe's first packet
	kfValid bool
	kfSSRC  uint32
	dd      media.DDParser // a parser of its own: replayed packets must not move the live one's state
	buf     []byte         // allocated at the first replay: most receivers never replay
}

// AddSinkFromKeyframe adds s like AddSink, but first replays to it the cached packets from the
// newest keyframe on. Only a video receiver of one stream (not simulcast) replays; other receivers
// add s at once. A sink waiting for its replay is added at the layer's next packet.
func (r *Receiver) AddSinkFromKeyframe(s Sink) {
	if !r.cfg.Codec.IsVideo() || r.cfg.Simulcast {
		r.AddSink(s)
		return
	}
	rp := &r.replay
	rp.mu.Lock()
	rp.pending = append(rp.pending, s)
	rp.waiting.Store(true)
	rp.mu.Unlock()
}

// dropPending forgets s if it still waits for its replay (RemoveSink).
func (rp *replayState) dropPending(s Sink) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for i, x := range rp.pending {
		if x == s {
			rp.pending = append(rp.pending[:i], rp.pending[i+1:]...)
			rp.waiting.Store(len(rp.pending) > 0)
			return
		}
	}
}

// noteKeyframe records where the newest keyframe starts (layer 0's goroutine).
func (rp *replayState) noteKeyframe(h *media.Header) {
	rp.kfSeq, rp.kfValid, rp.kfSSRC = h.Seq, true, h.SSRC
}

// takePending returns the sinks waiting for a replay, if any (layer 0's goroutine).
func (rp *replayState) takePending() []Sink {
	if !rp.waiting.Load() {
		return nil
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	out := rp.pending
	rp.pending = nil
	rp.waiting.Store(false)
	return out
}

// replayTo hands sinks the cached packets from the newest keyframe up to (not including) the
// packet h being delivered, then adds them as sinks. Called on layer 0's goroutine before h is
// delivered; packets the cache no longer has are skipped.
func (r *Receiver) replayTo(sinks []Sink, h *media.Header, now time.Duration) {
	rp := &r.replay
	l := &r.layers[0]
	if rp.kfValid && rp.kfSSRC == h.SSRC && h.Seq-rp.kfSeq < uint16(l.cache.Slots()) {
		if rp.buf == nil {
			rp.buf = make([]byte, media.SlotSize)
		}
		r.batch.Hold()
		for seq := rp.kfSeq; seq != h.Seq; seq++ {
			n, _ := l.cache.Get(seq, rp.buf)
			if n == 0 {
				continue
			}
			pkt := rp.buf[:n]
			ph, ok := media.ParseRTP(pkt)
			if !ok {
				continue
			}
			f, ok := media.ParsePacket(r.cfg.Codec, pkt, &ph, r.cfg.Extensions.DependencyDescriptor, &rp.dd)
			if !ok {
				continue
			}
			p := &l.pkt
			*p = Packet{Source: r, Layer: 0, Bytes: pkt, Header: ph, Flags: f, At: now, out: &l.writingState().out}
			for _, s := range sinks {
				s.WriteRTP(p)
			}
		}
		r.batch.Release()
		l.pkt.Bytes = nil
	}
	for _, s := range sinks {
		r.AddSink(s)
	}
}
