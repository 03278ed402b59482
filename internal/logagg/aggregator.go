// Package logagg keeps remote input from flooding the log: lines that repeat (same key — level and
// message, or Pion's scope, level and format) within a window are written once, and what was held
// back is written as one summary with a count when the window closes, or before the next such line
// if that comes first.
//
// A client that trickles 10,000 bad candidates, or that sends the same malformed request in a loop,
// then costs a few log lines instead of thousands, and the count still tells the operator how much
// happened.
package logagg

import (
	"sync"
	"time"
)

// DefaultWindow is how long a repeated line is held back before its summary.
const DefaultWindow = 10 * time.Second

// maxKeys bounds the distinct lines tracked in one window. Lines beyond it (messages with the
// remote input spliced into them, say) are counted under the overflow key instead of growing the
// map without bound.
const maxKeys = 256

// Clock is what an Aggregator needs of time; tests drive it by hand.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once after d (time.AfterFunc).
	AfterFunc(d time.Duration, f func())
}

type realClock struct{}

func (realClock) Now() time.Time                      { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }

// Summary reports n lines with key K that were held back; V is what the first line of the window
// was observed with (the logger to write the summary to, say).
type Summary[K comparable, V any] func(k K, v V, n int, window time.Duration)

// Aggregator decides which occurrences of a line are written. It is safe for concurrent use and
// allocates only when a key starts a window.
type Aggregator[K comparable, V any] struct {
	window   time.Duration
	clock    Clock
	overflow K
	emit     Summary[K, V]

	mu        sync.Mutex
	entries   map[K]*entry[V]
	scheduled bool // a flush is pending on the clock
}

type entry[V any] struct {
	start time.Time
	held  int // occurrences held back in this window
	v     V
}

// New returns an Aggregator that holds repeats back for window (DefaultWindow if <= 0) and reports
// them through emit. Keys beyond the bound on distinct keys are counted as overflow. A nil clock
// is the real one.
func New[K comparable, V any](window time.Duration, clock Clock, overflow K, emit Summary[K, V]) *Aggregator[K, V] {
	if window <= 0 {
		window = DefaultWindow
	}
	if clock == nil {
		clock = realClock{}
	}
	return &Aggregator[K, V]{window: window, clock: clock, overflow: overflow, emit: emit,
		entries: make(map[K]*entry[V])}
}

// Observe records one occurrence of k and reports whether the caller should write it. When k's
// previous window held lines back, their summary is emitted first, so it precedes this line.
func (a *Aggregator[K, V]) Observe(k K, v V) bool {
	now := a.clock.Now()
	a.mu.Lock()
	e := a.entries[k]
	if e == nil && len(a.entries) >= maxKeys {
		k = a.overflow
		e = a.entries[k]
	}
	if e != nil && now.Sub(e.start) < a.window {
		e.held++
		a.mu.Unlock()
		return false
	}
	var held int
	var heldV V
	if e == nil {
		e = &entry[V]{}
		a.entries[k] = e
	} else {
		held, heldV = e.held, e.v
	}
	*e = entry[V]{start: now, v: v}
	schedule := !a.scheduled
	a.scheduled = true
	a.mu.Unlock()
	if schedule {
		a.clock.AfterFunc(a.window, a.Flush)
	}
	if held > 0 {
		a.emit(k, heldV, held, a.window)
	}
	return true
}

// Flush emits the summaries of windows that have closed and forgets their keys; it runs on the
// clock when a window ends.
func (a *Aggregator[K, V]) Flush() { a.flush(false) }

// Drain emits every summary now, closed windows or not (at shutdown, so that no count is lost).
func (a *Aggregator[K, V]) Drain() { a.flush(true) }

func (a *Aggregator[K, V]) flush(all bool) {
	type due struct {
		k K
		v V
		n int
	}
	var out []due
	now := a.clock.Now()
	a.mu.Lock()
	next := time.Duration(-1)
	for k, e := range a.entries {
		left := a.window - now.Sub(e.start)
		if left > 0 && !all {
			if next < 0 || left < next {
				next = left
			}
			continue
		}
		if e.held > 0 {
			out = append(out, due{k, e.v, e.held})
		}
		delete(a.entries, k)
	}
	a.scheduled = next >= 0
	a.mu.Unlock()
	if next >= 0 {
		a.clock.AfterFunc(next, a.Flush)
	}
	for _, d := range out {
		a.emit(d.k, d.v, d.n, a.window)
	}
}

// Tracked is the number of keys in open windows (for tests).
func (a *Aggregator[K, V]) Tracked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.entries)
}
