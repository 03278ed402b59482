// Package sched runs the periodic work of many owners on one goroutine: every subscriber's
// allocator (its decision tick and probe padding), every PeerConnection's estimator timers and
// media monitor. With a ticker and a goroutine each, N subscribers cost N wake-ups of the Go
// scheduler per tick (each a goroutine switch, often a futex wake of an idle thread); on one loop
// with aligned deadlines they cost one, and the callbacks due at that instant run one after the
// other in a batch.
//
// Deadlines are aligned to multiples of their timer's period since the loop's epoch, so that
// every 50 ms timer of the process fires at the same instant, and every 10 ms timer at those
// instants and four more between them. A timer that missed ticks (the loop was late) skips them,
// as a time.Ticker drops the ticks its reader did not take.
//
// Callbacks run on the loop's goroutine, one at a time: they must not block, and whatever they
// touch that other goroutines touch too needs its own lock. The goroutine runs only while some
// timer is scheduled, so an idle process (or a test counting goroutines) has none.
package sched

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// Loop is one goroutine running the callbacks of many timers. The zero value is not usable; call
// New, or use Shared.
type Loop struct {
	epoch time.Time

	mu      sync.Mutex
	timers  timerHeap
	running bool          // the goroutine is up (or about to be)
	tick    time.Duration // the period of the goroutine's ticker (0: none)
	kick    chan struct{} // the goroutine must look at the timers before its next tick
	batch   []*Timer      // the timers due at one instant; owned by the goroutine
	batches atomic.Uint64 // how many batches ran (the wake-ups that found work)
}

// New returns a loop with no timers (and no goroutine until one is scheduled).
func New() *Loop {
	return &Loop{epoch: time.Now(), kick: make(chan struct{}, 1)}
}

var shared = New()

// Shared is the process's loop: every allocator, estimator and monitor of the server schedules
// its timers here, so that all of them share its wake-ups.
func Shared() *Loop { return shared }

// Timer calls its function on its loop: every period while started, or once.
type Timer struct {
	loop   *Loop
	fn     func()
	period time.Duration // 0: a one-shot (Once)
	at     time.Duration // the next deadline, since the loop's epoch
	index  int           // position in the loop's heap; -1 when not scheduled
	active bool          // started and not stopped (a periodic timer is rescheduled after running)
}

// NewTimer returns a stopped timer that runs fn on l's goroutine; Start it, or call Once.
func (l *Loop) NewTimer(fn func()) *Timer {
	return &Timer{loop: l, fn: fn, index: -1}
}

// Every returns a started timer running fn every period.
func (l *Loop) Every(period time.Duration, fn func()) *Timer {
	t := l.NewTimer(fn)
	t.Start(period)
	return t
}

// Start makes the timer run every period, first at the next multiple of period. Starting a timer
// that runs with the same period changes nothing; with another period (or one waiting for Once)
// it is rescheduled.
func (t *Timer) Start(period time.Duration) {
	if period <= 0 {
		panic("sched: non-positive period")
	}
	l := t.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.active && t.period == period {
		return
	}
	if t.index >= 0 {
		heap.Remove(&l.timers, t.index)
	}
	t.active, t.period = true, period
	l.push(t, l.next(period), true)
}

// Once makes the timer run once, at the next multiple of align (as soon as the loop gets to it
// when align is 0), unless it is already due by then; a periodic timer becomes a one-shot.
// Aligning one-shots lets those of many owners share a wake-up.
func (t *Timer) Once(align time.Duration) {
	l := t.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.since()
	if align > 0 {
		at = l.next(align)
	}
	if t.index >= 0 {
		if t.at <= at {
			t.period = 0
			return
		}
		heap.Remove(&l.timers, t.index)
	}
	t.active, t.period = true, 0
	l.push(t, at, true)
}

// Stop keeps the timer from running again. A call already under way on the loop's goroutine may
// still finish after Stop returns: an owner that must not act after closing checks its own state
// in the callback. Stopping the last timer wakes the goroutine so that it ends, rather than sleep
// towards a deadline that is gone (a one-shot an hour away, say).
func (t *Timer) Stop() {
	l := t.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	t.active = false
	if t.index < 0 {
		return
	}
	heap.Remove(&l.timers, t.index)
	if len(l.timers) == 0 && l.running {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

func (l *Loop) since() time.Duration { return time.Since(l.epoch) }

// next is the first multiple of period after now.
func (l *Loop) next(period time.Duration) time.Duration {
	return (l.since()/period + 1) * period
}

// push puts an active timer in the heap at deadline at; from outside the goroutine (wake), it
// starts the goroutine, or wakes it when its ticker would get to the timer too late: a one-shot
// due before the next tick, a period shorter than the ticker's. l.mu is held.
func (l *Loop) push(t *Timer, at time.Duration, wake bool) {
	t.at = at
	heap.Push(&l.timers, t)
	switch {
	case !wake:
	case !l.running:
		l.running = true
		go l.run()
	case l.tick == 0 || (t.period == 0 && at < l.since()+l.tick) || (t.period > 0 && t.period < l.tick):
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// run wakes on a ticker whose period is the shortest of the periodic timers', and runs what is
// due. A ticker, not a timer reset to each next deadline: the runtime re-arms a ticker itself,
// whereas resetting a timer from a goroutine breaks the network poller's wait (a write to its
// eventfd and another thread woken) whenever that deadline comes first, as it does here at every
// tick. With the periods of the server's timers multiples of each other (10, 50, 100, 250 ms),
// every deadline falls on a tick, one tick late at most when the ticker started between two.
func (l *Loop) run() {
	var ticker *time.Ticker
	var ticks <-chan time.Time        // ticker.C while it runs
	var period time.Duration          // the ticker's
	sleep := time.NewTimer(time.Hour) // for one-shots while no periodic timer runs
	defer func() {
		sleep.Stop()
		if ticker != nil {
			ticker.Stop()
		}
	}()
	for {
		l.mu.Lock()
		if len(l.timers) == 0 {
			l.running, l.tick = false, 0
			l.mu.Unlock()
			return
		}
		now := l.since()
		if wait := l.timers[0].at - now; wait > 0 {
			tick := l.shortestPeriod()
			l.tick = tick
			l.mu.Unlock()
			switch {
			case tick == 0:
				if ticks != nil {
					ticker.Stop()
					ticks = nil
				}
				sleep.Reset(wait)
			case ticker == nil:
				ticker, period = time.NewTicker(tick), tick
				ticks = ticker.C
			case ticks == nil || tick != period:
				ticker.Reset(tick)
				period, ticks = tick, ticker.C
			}
			select {
			case <-ticks:
			case <-sleep.C:
			case <-l.kick:
			}
			continue
		}
		batch := l.batch[:0]
		for len(l.timers) > 0 && l.timers[0].at <= now {
			t := heap.Pop(&l.timers).(*Timer)
			if t.period == 0 {
				t.active = false // a one-shot runs once, unless it is scheduled again
			}
			batch = append(batch, t)
		}
		l.mu.Unlock()

		l.batches.Add(1)
		for _, t := range batch {
			t.fn()
		}

		l.mu.Lock()
		for i, t := range batch {
			// Not when stopped meanwhile, nor when restarted (Start or Once scheduled it).
			if t.active && t.index < 0 {
				l.push(t, l.next(t.period), false)
			}
			batch[i] = nil
		}
		l.batch = batch
		l.mu.Unlock()
	}
}

// shortestPeriod is the shortest period of the scheduled periodic timers (0: none). l.mu is held.
func (l *Loop) shortestPeriod() time.Duration {
	var p time.Duration
	for _, t := range l.timers {
		if t.period > 0 && (p == 0 || t.period < p) {
			p = t.period
		}
	}
	return p
}

// timerHeap orders timers by deadline (container/heap).
type timerHeap []*Timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
