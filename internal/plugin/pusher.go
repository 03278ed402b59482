package plugin

import "sync"

// Pusher guards a session's events against its handle going away: after Detach nothing is pushed,
// because the gateway may already have forgotten the handle. Pushes may come from any goroutine
// (media callbacks, timers, the request worker); the zero value is ready to use.
type Pusher struct {
	mu       sync.RWMutex
	detached bool
}

// Push sends an event to h unless Detach was called; a nil error when it was.
func (p *Pusher) Push(h Handle, tx string, data any, jsep *JSEP) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.detached {
		return nil
	}
	return h.PushEvent(tx, data, jsep)
}

// Detach stops every later Push and waits for one under way; it says whether it had been called
// before.
func (p *Pusher) Detach() (already bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	already, p.detached = p.detached, true
	return already
}
