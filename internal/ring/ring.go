// Package ring is a FIFO queue of values on a circular buffer that doubles when full: the
// packet queues of the simulator's links, the emulator's links and the lab's per-hop bookkeeping.
// Its length is a power of two so that an index wraps with a mask, and values are stored
// inline, so that pushing and popping allocate nothing once the buffer has grown to the queue's
// largest size. Window (window.go) is the other circular buffer here: records indexed by sequence
// number, kept for a time horizon, in a buffer that doubles to the stream's rate.
package ring

// Ring is a FIFO of T. The zero value is an empty ring; it is not safe for concurrent use.
type Ring[T any] struct {
	buf     []T
	head, n int
}

// minGrow is the capacity of a ring's first buffer.
const minGrow = 16

// New returns an empty ring with room for capacity values before it grows (rounded up to a power
// of two).
func New[T any](capacity int) Ring[T] {
	size := minGrow
	for size < capacity {
		size *= 2
	}
	return Ring[T]{buf: make([]T, size)}
}

// Len is the number of values queued.
func (r *Ring[T]) Len() int { return r.n }

// Push appends v at the back, doubling the buffer when it is full.
func (r *Ring[T]) Push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *Ring[T]) grow() {
	grown := make([]T, max(minGrow, 2*len(r.buf)))
	for i := range r.n {
		grown[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = grown, 0
}

// At is the i-th oldest value (0 is the front), in place; i must be below Len.
func (r *Ring[T]) At(i int) *T {
	if uint(i) >= uint(r.n) {
		panic("ring: index out of range")
	}
	return &r.buf[(r.head+i)&(len(r.buf)-1)]
}

// Front is the oldest value, in place. The ring must not be empty: the caller checks Len (a
// packet queue's hot path, so no second check here).
func (r *Ring[T]) Front() *T { return &r.buf[r.head] }

// Pop removes the oldest value and returns it; the ring must not be empty.
func (r *Ring[T]) Pop() T {
	slot := &r.buf[r.head]
	v := *slot
	var zero T
	*slot = zero // hold no reference to what left
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

// Discard removes the k oldest values (all of them when k ≥ Len), clearing their slots.
func (r *Ring[T]) Discard(k int) {
	for ; k > 0 && r.n > 0; k-- {
		r.Pop()
	}
}
