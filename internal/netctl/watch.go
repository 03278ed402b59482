package netctl

import "github.com/strata-rtc/strata/internal/netctl/api"

// Event is a change in the decisions, as the decision stream carries it: Type is one of
// api.EventSnapshot (Snapshot holds every current decision), api.EventDecision (Decision) and
// api.EventRemoved (Removed).
type Event struct {
	Type     string
	Snapshot api.Decisions
	Decision api.Decision
	Removed  api.Removed
}

// Watcher receives decision events. The first event is a snapshot of all decisions; then come
// changes, in order. A watcher that falls more than its buffer behind is dropped: its channel is
// closed, and it should watch again (getting a fresh snapshot), so that a slow reader never holds
// up the controller.
type Watcher struct {
	c  *Controller
	ch chan Event
}

// Watch starts watching decisions with room for buffer pending events (at least 1).
func (c *Controller) Watch(buffer int) *Watcher {
	w := &Watcher{c: c, ch: make(chan Event, max(buffer, 1))}
	c.mu.Lock()
	defer c.mu.Unlock()
	w.ch <- Event{Type: api.EventSnapshot, Snapshot: c.snapshot()}
	c.watchers[w] = struct{}{}
	return w
}

// Events is the watcher's channel; it is closed by Close or when the watcher falls behind.
func (w *Watcher) Events() <-chan Event { return w.ch }

// Close stops watching.
func (w *Watcher) Close() {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if _, ok := w.c.watchers[w]; ok {
		delete(w.c.watchers, w)
		close(w.ch)
	}
}

// notify sends an event to every watcher without blocking (c.mu held).
func (c *Controller) notify(e Event) {
	for w := range c.watchers {
		select {
		case w.ch <- e:
		default:
			delete(c.watchers, w)
			close(w.ch)
		}
	}
}
