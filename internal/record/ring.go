package record

import (
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// ring carries packets from the media path to a writer goroutine: a fixed ring of preallocated
// slots, one producer (the layer's goroutine) and one consumer, so two counters suffice. A packet
// that finds it full, or does not fit a slot, is refused: the media path never waits.
type ring struct {
	data       []byte
	meta       []slotMeta
	mask       uint64
	head, tail atomic.Uint64
	wake       chan struct{}
	resync     atomic.Bool
}

// slotMeta describes the packet in one ring slot.
type slotMeta struct {
	n      int
	at     time.Duration
	resync bool // the stream did not continue before this packet
}

// newRing makes a ring of at least slots slots (a power of two), which signals wake when it is
// given a packet (a writer may share one wake channel among rings).
func newRing(slots int, wake chan struct{}) *ring {
	n := 1
	for n < slots {
		n <<= 1
	}
	return &ring{data: make([]byte, n*media.SlotSize), meta: make([]slotMeta, n), mask: uint64(n - 1), wake: wake}
}

// push copies the packet into the ring; false if it was refused. It allocates nothing.
func (r *ring) push(p *sfu.Packet) bool {
	t := r.tail.Load()
	if len(p.Bytes) > media.SlotSize || t-r.head.Load() > r.mask {
		return false
	}
	i := t & r.mask
	n := copy(r.data[i*media.SlotSize:(i+1)*media.SlotSize], p.Bytes)
	resync := r.resync.Load() && r.resync.Swap(false)
	r.meta[i] = slotMeta{n: n, at: p.At, resync: resync}
	r.tail.Store(t + 1)
	select {
	case r.wake <- struct{}{}:
	default: // the writer is already due to look
	}
	return true
}

// markResync marks the next packet pushed: the stream does not continue before it.
func (r *ring) markResync() { r.resync.Store(true) }

// peek says when the oldest packet in the ring arrived; false if the ring is empty.
func (r *ring) peek() (time.Duration, bool) {
	h := r.head.Load()
	if h == r.tail.Load() {
		return 0, false
	}
	return r.meta[h&r.mask].at, true
}

// take hands the oldest packet to fn (its bytes valid during the call) and frees its slot; the ring
// must not be empty.
func (r *ring) take(fn func(pkt []byte, at time.Duration, resync bool)) {
	h := r.head.Load()
	i := h & r.mask
	s := &r.meta[i]
	fn(r.data[i*media.SlotSize:i*media.SlotSize+uint64(s.n)], s.at, s.resync)
	r.head.Store(h + 1)
}

// drain hands every packet in the ring to fn, oldest first.
func (r *ring) drain(fn func(pkt []byte, at time.Duration, resync bool)) {
	for h, t := r.head.Load(), r.tail.Load(); h != t; h++ {
		r.take(fn)
	}
}
