package cctest

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Link is a one-way FIFO bottleneck: packets are serialised at Rate behind those already queued,
// dropped when the queue would exceed Buffer bytes (0: unlimited), then delayed by Delay.
type Link struct {
	Rate   cc.Bitrate
	Delay  time.Duration
	Buffer int

	busyUntil time.Duration
	Dropped   int
}

// Backlog is the number of bytes queued at now.
func (l *Link) Backlog(now time.Duration) int {
	if l.busyUntil <= now {
		return 0
	}
	return l.Rate.BytesIn(l.busyUntil - now)
}

// QueueDelay is the queuing delay a packet offered at now would see.
func (l *Link) QueueDelay(now time.Duration) time.Duration {
	return max(0, l.busyUntil-now)
}

// Send offers a packet of size bytes at now and returns when it reaches the far end, or
// dropped=true when the buffer is full.
func (l *Link) Send(now time.Duration, size int) (arrival time.Duration, dropped bool) {
	if l.Buffer > 0 && l.Backlog(now)+size > l.Buffer {
		l.Dropped++
		return 0, true
	}
	start := max(now, l.busyUntil)
	l.busyUntil = start + l.Rate.TimeFor(size)
	return l.busyUntil + l.Delay, false
}
