package ring

import "time"

// Stamped is a record of a Window: the sequence number that picks its slot, the time it was made,
// and whether it is a record at all (false for an empty slot, the zero value).
type Stamped interface {
	Stamp() (seq uint32, at time.Duration, ok bool)
}

// Window keeps the records of the last horizon (e.g. the packets sent in the last two seconds), by
// sequence number, in as few slots as that takes: the slot of sequence number s is s modulo the
// length, a power of two, and the window doubles, up to its maximum length, whenever a new record
// would replace one made less than horizon before it. A stream's memory then follows its packet
// rate instead of the fastest stream's: a 50 packet/s audio stream keeps the smallest window, a
// 1500 packet/s video stream a window 32 times as long. Lookups never allocate; Put allocates only
// when the window doubles. Not safe for concurrent use.
type Window[T Stamped] struct {
	slots   []T
	max     int
	horizon time.Duration
}

// NewWindow returns a window of minLen slots that grows to at most maxLen (both rounded up to
// powers of two, maxLen at least minLen, both below 2^31) to keep horizon of records.
func NewWindow[T Stamped](minLen, maxLen int, horizon time.Duration) Window[T] {
	return Window[T]{slots: make([]T, powerOfTwo(minLen)), max: powerOfTwo(max(minLen, maxLen)), horizon: horizon}
}

func powerOfTwo(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// Len is the number of slots.
func (w *Window[T]) Len() int { return len(w.slots) }

// Slot is the slot of sequence number seq, in place, whatever record it holds (the caller compares
// the record's sequence number with seq).
func (w *Window[T]) Slot(seq uint32) *T { return &w.slots[seq&uint32(len(w.slots)-1)] }

// Put stores v in the slot of its sequence number, first doubling the window as long as that slot
// holds a record made less than horizon before v (and the window is below its maximum).
func (w *Window[T]) Put(v T) {
	seq, at, _ := v.Stamp()
	for len(w.slots) < w.max {
		_, old, ok := (*w.Slot(seq)).Stamp()
		if !ok || at-old >= w.horizon {
			break
		}
		w.grow()
	}
	*w.Slot(seq) = v
}

// grow doubles the window. Records that had distinct slots keep distinct slots (their sequence
// numbers differ modulo the old length, so modulo the new one too).
func (w *Window[T]) grow() {
	slots := make([]T, 2*len(w.slots))
	mask := uint32(len(slots) - 1)
	for _, r := range w.slots {
		if seq, _, ok := r.Stamp(); ok {
			slots[seq&mask] = r
		}
	}
	w.slots = slots
}

// Reset empties every slot, keeping the length.
func (w *Window[T]) Reset() { clear(w.slots) }
