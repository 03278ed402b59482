package logagg

import (
	"sync"
	"time"
)

// ManualClock is a Clock that moves only when told: tests of aggregated logging use it to close
// windows deterministically.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []manualTimer
}

type manualTimer struct {
	at time.Time
	f  func()
}

// NewManualClock returns a ManualClock at an arbitrary fixed instant.
func NewManualClock() *ManualClock { return &ManualClock{now: time.Unix(1_000_000, 0)} }

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements Clock: f runs when Advance passes its time.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, manualTimer{c.now.Add(d), f})
}

// Skip moves time on without running any callback (a flush that has not run yet).
func (c *ManualClock) Skip(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Advance moves time on and runs the callbacks that fell due, as the runtime would.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			keep = append(keep, t)
		} else {
			due = append(due, t.f)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}
