package logagg

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// recorder collects what an Aggregator lets through and what it summarises, in order.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, s)
}

func (r *recorder) emit(k string, v int, n int, _ time.Duration) {
	r.add(fmt.Sprintf("summary %s v%d x%d", k, v, n))
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

func (r *recorder) observe(a *Aggregator[string, int], k string, v int) {
	if a.Observe(k, v) {
		r.add(fmt.Sprintf("line %s v%d", k, v))
	}
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestRepeatsAreHeldBackAndSummarisedBeforeTheNextLine(t *testing.T) {
	clock := NewManualClock()
	var r recorder
	a := New(10*time.Second, clock, "overflow", r.emit)
	for i := range 1000 {
		r.observe(a, "bad candidate", i)
		r.observe(a, "other", i)
	}
	equal(t, r.got(), []string{"line bad candidate v0", "line other v0"})
	// The window is over but its flush has not run yet: the next occurrence brings the summary
	// of the window before it, then is written itself.
	clock.Skip(10 * time.Second)
	r.observe(a, "bad candidate", 1000)
	equal(t, r.got()[2:], []string{"summary bad candidate v0 x999", "line bad candidate v1000"})
}

func TestWindowCloseFlushesTheSummaryAndForgetsTheKey(t *testing.T) {
	clock := NewManualClock()
	var r recorder
	a := New(10*time.Second, clock, "overflow", r.emit)
	r.observe(a, "once", 1)
	clock.Advance(time.Second)
	for i := range 5 {
		r.observe(a, "flood", i)
	}
	clock.Advance(9 * time.Second) // "once" closes: nothing held, nothing to say
	equal(t, r.got(), []string{"line once v1", "line flood v0"})
	if a.Tracked() != 1 {
		t.Fatalf("tracked %d keys, want only flood's", a.Tracked())
	}
	clock.Advance(time.Second) // "flood" closes
	equal(t, r.got()[2:], []string{"summary flood v0 x4"})
	if a.Tracked() != 0 {
		t.Fatalf("tracked %d keys after every window closed", a.Tracked())
	}
	// A line after the flush starts afresh: written, no second summary.
	r.observe(a, "flood", 9)
	equal(t, r.got()[3:], []string{"line flood v9"})
}

func TestDistinctKeysBeyondTheBoundShareTheOverflowKey(t *testing.T) {
	clock := NewManualClock()
	var r recorder
	a := New(time.Minute, clock, "overflow", r.emit)
	for i := range maxKeys + 500 {
		r.observe(a, fmt.Sprintf("candidate %d failed", i), i)
	}
	lines := r.got()
	// The first line beyond the bound is written as it is; the rest count under the overflow key.
	if len(lines) != maxKeys+1 {
		t.Fatalf("%d lines written, last %q; want %d distinct and one beyond the bound", len(lines), lines[len(lines)-1], maxKeys)
	}
	if a.Tracked() > maxKeys+1 {
		t.Fatalf("tracked %d keys, bound %d", a.Tracked(), maxKeys)
	}
	clock.Advance(time.Minute)
	equal(t, r.got()[maxKeys+1:], []string{fmt.Sprintf("summary overflow v%d x499", maxKeys)})
}

// TestNothingIsLostUnderConcurrency: every occurrence is either written or counted in a summary.
func TestNothingIsLostUnderConcurrency(t *testing.T) {
	clock := NewManualClock()
	var mu sync.Mutex
	written, summarised := 0, 0
	a := New(time.Second, clock, "overflow", func(_ string, _ int, n int, _ time.Duration) {
		mu.Lock()
		summarised += n
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				if a.Observe(fmt.Sprint("key", i%3), g) {
					mu.Lock()
					written++
					mu.Unlock()
				}
				if g == 0 && i%100 == 0 {
					clock.Advance(300 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	clock.Advance(time.Hour)
	if written+summarised != 8*2000 {
		t.Fatalf("written %d + summarised %d != %d occurrences", written, summarised, 8*2000)
	}
	if written > 3*30 {
		t.Fatalf("%d lines written for 3 keys over ~6 s of windows of 1 s", written)
	}
}

func TestHeldBackOccurrenceAllocatesNothing(t *testing.T) {
	a := New(time.Hour, NewManualClock(), "overflow", func(string, int, int, time.Duration) {})
	a.Observe("k", 0)
	if n := testing.AllocsPerRun(1000, func() { a.Observe("k", 1) }); n != 0 {
		t.Fatalf("%v allocations per held-back line", n)
	}
}

// TestDrainWritesOpenWindowsOnce: at shutdown the counts of windows still open are written, and the
// flush that was due later finds nothing more to say.
func TestDrainWritesOpenWindowsOnce(t *testing.T) {
	clock := NewManualClock()
	var r recorder
	a := New(10*time.Second, clock, "overflow", r.emit)
	for i := range 3 {
		r.observe(a, "flood", i)
	}
	a.Drain()
	clock.Advance(time.Minute)
	equal(t, r.got(), []string{"line flood v0", "summary flood v0 x2"})
}
