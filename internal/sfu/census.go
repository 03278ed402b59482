package sfu

import (
	"sync"
	"time"
)

// Census tells the allocators of one server whether the congestion they see is shared. Subscribers'
// paths are independent: when many of them show congestion within the same second, the cause is
// common to them — the server's CPU stalled (late packets look like a growing queue to every
// estimator at once), or the server's own link is full — and pausing video for it would freeze a
// whole room over a hiccup. The allocators pass the verdict to their policy (policy.Input.Shared),
// which then does not pause video and does not back off its resume probes.
type Census struct {
	mu      sync.Mutex
	members map[uint64]time.Duration // member → when it last reported congestion (-1: never)
	nextID  uint64

	shared     bool
	computedAt time.Duration
	computed   bool
}

const (
	// censusWindow: congestion reported this recently counts as now.
	censusWindow = time.Second
	// censusMin and censusShare: congestion is shared when at least censusMin members, and at
	// least censusShare percent of them, reported it within censusWindow.
	censusMin   = 4
	censusShare = 50
	// censusEvery: the verdict is recomputed at most this often (it costs a pass over the members).
	censusEvery = 50 * time.Millisecond
)

// NewCensus returns an empty census.
func NewCensus() *Census { return &Census{members: map[uint64]time.Duration{}} }

// join adds a member and returns its id.
func (c *Census) join() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	c.members[c.nextID] = -1
	return c.nextID
}

// leave removes a member.
func (c *Census) leave(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.members, id)
}

// report records whether a member's path is congested now, and returns whether congestion is
// shared.
func (c *Census) report(id uint64, now time.Duration, congested bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.members[id]; ok && congested {
		c.members[id] = now
	}
	if !c.computed || now-c.computedAt >= censusEvery || now < c.computedAt {
		c.shared, c.computedAt, c.computed = c.count(now), now, true
	}
	return c.shared
}

func (c *Census) count(now time.Duration) bool {
	n := 0
	for _, at := range c.members {
		if at >= 0 && now-at <= censusWindow {
			n++
		}
	}
	return n >= censusMin && n*100 >= len(c.members)*censusShare
}
