package httpapi

import (
	"sync"

	"github.com/strata-rtc/strata/internal/janus"
)

// EventsDropped is the janus type of the notice that takes the place of dropped events.
const EventsDropped = "events_dropped"

// queue holds one session's events until a long-poll takes them. It is bounded: when a client stops
// polling, the oldest events are dropped so that plugins never wait for it, and the next poll
// starts with an EventsDropped notice saying how many are missing there.
type queue struct {
	mu     sync.Mutex
	sid    uint64
	msgs   []janus.Message
	wake   chan struct{} // closed and replaced whenever something changes
	closed bool          // the session left this transport; drain what is left, then 404
	// lost counts the events dropped since the last take. They were always the oldest, so they are
	// all missing right before msgs[0].
	lost  uint64
	limit int
}

func newQueue(sid uint64, limit int) *queue {
	return &queue{sid: sid, wake: make(chan struct{}), limit: limit}
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
		q.lost++
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

// take removes up to max messages, an EventsDropped notice first if events were dropped. When it
// returns none, wait is closed on the next change.
func (q *queue) take(max int) (msgs []janus.Message, closed bool, wait <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lost > 0 {
		msgs = append(make([]janus.Message, 0, min(max, len(q.msgs)+1)), droppedNotice(q.sid, q.lost))
		q.lost = 0
		max--
	}
	n := min(max, len(q.msgs))
	if n > 0 {
		msgs = append(msgs, q.msgs[:n]...)
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

// droppedNotice is {"janus":"events_dropped","session_id":S,"dropped":N}. janus.js logs a type it
// does not know as a warning and goes on polling.
func droppedNotice(sid, n uint64) janus.Message {
	return janus.Message{Janus: EventsDropped, SessionID: sid, Extra: map[string]any{"dropped": n}}
}
