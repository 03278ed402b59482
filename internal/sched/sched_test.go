package sched

import (
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (l *Loop) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.running
}

// Timers of one period share their wake-ups: many owners cost one batch per tick, not one each.
func TestTimersOfOnePeriodRunInOneBatch(t *testing.T) {
	l := New()
	const owners = 50
	var calls atomic.Int64
	timers := make([]*Timer, owners)
	for i := range timers {
		timers[i] = l.Every(5*time.Millisecond, func() { calls.Add(1) })
	}
	waitFor(t, "20 ticks of every timer", func() bool { return calls.Load() >= 20*owners })
	for _, tm := range timers {
		tm.Stop()
	}
	n, b := calls.Load(), l.batches.Load()
	// The first tick may split where the timers were created across a multiple of the period;
	// every later one runs all of them at once.
	if b == 0 || n/int64(b) < owners/2 {
		t.Errorf("%d calls in %d batches: the timers did not share their wake-ups", n, b)
	}
	waitFor(t, "the goroutine to end", l.idle)
}

// Stop ends a periodic timer, also from its own callback; Start with another
// period reschedules it.
func TestEveryStopAndRestart(t *testing.T) {
	l := New()
	var n atomic.Int64
	var tm *Timer
	tm = l.NewTimer(func() {
		if n.Add(1) == 5 {
			tm.Stop()
		}
	})
	tm.Start(20 * time.Millisecond)
	waitFor(t, "five calls", func() bool { return n.Load() >= 5 })
	waitFor(t, "the goroutine to end after Stop", l.idle)
	time.Sleep(50 * time.Millisecond)
	if got := n.Load(); got != 5 {
		t.Errorf("%d calls, want 5 (Stop in the callback)", got)
	}

	tm.Start(time.Hour)
	tm.Start(5 * time.Millisecond) // another period: rescheduled, not left an hour out
	waitFor(t, "a call after the restart", func() bool { return n.Load() > 5 })
	tm.Stop()
	waitFor(t, "the goroutine to end", l.idle)
}

// Once runs once; calls that ask for a later time than the one already scheduled change nothing,
// so that many nudges within an alignment share one call.
func TestOnce(t *testing.T) {
	l := New()
	var n atomic.Int64
	tm := l.NewTimer(func() { n.Add(1) })
	for range 100 {
		tm.Once(20 * time.Millisecond)
	}
	waitFor(t, "the call", func() bool { return n.Load() >= 1 })
	waitFor(t, "the goroutine to end", l.idle)
	if got := n.Load(); got != 1 {
		t.Errorf("%d calls for 100 Once within one alignment, want 1", got)
	}
	tm.Once(time.Hour)
	tm.Once(0) // sooner: it moves up
	waitFor(t, "the second call", func() bool { return n.Load() >= 2 })
	tm.Once(time.Hour)
	tm.Stop()
	waitFor(t, "the goroutine to end after Stop", l.idle)
	if got := n.Load(); got != 2 {
		t.Errorf("%d calls, want 2", got)
	}
}

// A callback may schedule its own timer again (Once from Once) and start and stop others.
func TestCallbacksScheduleTimers(t *testing.T) {
	l := New()
	var n atomic.Int64
	other := l.NewTimer(func() { n.Add(100) })
	var self *Timer
	self = l.NewTimer(func() {
		if n.Add(1) < 3 {
			self.Once(0)
			return
		}
		other.Once(0)
	})
	self.Once(0)
	waitFor(t, "three calls and the other timer", func() bool { return n.Load() == 103 })
	waitFor(t, "the goroutine to end", l.idle)
}
