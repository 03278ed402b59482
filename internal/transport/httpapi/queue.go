package httpapi

import (
	"sync"

	"github.com/strata-rtc/strata/internal/janus"
)

// queue holds one session's events until a long-poll takes them. It is bounded: when a client stops
// polling, the oldest events are dropped so that plugins never wait for it.
type queue struct {
	mu      sync.Mutex
	msgs    []janus.Message
	wake    chan struct{} // closed and replaced whenever something changes
	closed  bool          // the session left this transport; drain what is left, then 404
	dropped uint64
	limit   int
}

func newQueue(limit int) *queue {
	return &queue{wake: make(chan struct{}), limit: limit}
}

// push appends a message, dropping the oldest one if the queue is full; it reports whether it
// dropped.
func (q *queue) push(m janus.Message) (dropped bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return true
	}
	if len(q.msgs) >= q.limit {
		q.msgs[0] = janus.Message{}
		q.msgs = q.msgs[1:]
		q.dropped++
		dropped = true
	}
	q.msgs = append(q.msgs, m)
	q.signal()
	return dropped
}

// close marks the queue as finished; pending messages can still be taken.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.signal()
	}
}

// signal wakes every waiting long-poll. Called with q.mu held.
func (q *queue) signal() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// take removes up to max messages. When it returns none, wait is closed on the next change.
func (q *queue) take(max int) (msgs []janus.Message, closed bool, wait <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(max, len(q.msgs))
	if n > 0 {
		msgs = make([]janus.Message, n)
		copy(msgs, q.msgs[:n])
		clear(q.msgs[:n])
		q.msgs = q.msgs[n:]
		if len(q.msgs) == 0 {
			q.msgs = nil
		}
	}
	return msgs, q.closed, q.wake
}

// drained reports whether a closed queue has nothing left to give.
func (q *queue) drained() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed && len(q.msgs) == 0
}
