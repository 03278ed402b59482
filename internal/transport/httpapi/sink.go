package httpapi

import (
	"time"

	"github.com/strata-rtc/strata/internal/janus"
)

// The Handler is the gateway.Sink of every session created or claimed over HTTP.

// Transport implements gateway.Sink.
func (h *Handler) Transport() string { return TransportName }

// Bind implements gateway.Sink: the session gets a fresh event queue.
func (h *Handler) Bind(sid uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked(time.Now())
	if old := h.queues[sid]; old != nil {
		old.close()
	}
	h.queues[sid] = newQueue(sid, h.queueLimit)
}

// Deliver implements gateway.Sink. It never blocks: a full queue drops its oldest event, and the
// session's next long-poll says so.
func (h *Handler) Deliver(sid uint64, m janus.Message) {
	q := h.queue(sid)
	if q == nil {
		h.dropped.Add(1)
		return
	}
	if q.push(m) {
		n := h.dropped.Add(1)
		if n&(n-1) == 0 { // log at 1, 2, 4, 8... drops: visible without flooding
			h.log.Warn("session event queue full, dropping oldest events (is anyone long-polling?)",
				"session", sid, "dropped_total", n)
		}
	}
}

// Unbind implements gateway.Sink. A queue that still holds events (the `timeout` that preceded the
// Unbind, say) is kept for a while so that one more long-poll can collect them.
func (h *Handler) Unbind(sid uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queues[sid]
	if q == nil {
		return
	}
	q.close()
	if q.drained() {
		delete(h.queues, sid)
		return
	}
	h.retired = append(h.retired, retiredQueue{id: sid, q: q, until: time.Now().Add(h.retireAfter())})
}

// retireAfter is how long a closed queue with events waits for its last long-poll.
func (h *Handler) retireAfter() time.Duration {
	return max(2*h.longPoll, 10*time.Second)
}

// sweepLocked forgets retired queues whose time is up. Called with h.mu held.
func (h *Handler) sweepLocked(now time.Time) {
	n := 0
	for n < len(h.retired) && now.After(h.retired[n].until) {
		r := h.retired[n]
		if h.queues[r.id] == r.q {
			delete(h.queues, r.id)
		}
		n++
	}
	if n > 0 {
		clear(h.retired[:n])
		h.retired = h.retired[n:]
	}
}

func (h *Handler) queue(sid uint64) *queue {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queues[sid]
}

// forget drops a closed, drained queue once a long-poll has seen the end of it.
func (h *Handler) forget(sid uint64, q *queue) {
	if q == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.queues[sid] == q && q.drained() {
		delete(h.queues, sid)
	}
}
