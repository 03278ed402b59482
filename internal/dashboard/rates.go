package dashboard

import (
	"sync"
	"time"
)

// minRateInterval is the shortest interval a rate is computed over: two pages polling at once
// would otherwise see rates over a few milliseconds, all noise.
const minRateInterval = 500 * time.Millisecond

// counts are the cumulative byte counters a rate is computed from.
type counts struct{ in, out uint64 }

// rate is bit/s each way.
type rate struct{ in, out uint64 }

type rateEntry struct {
	at   time.Time
	last counts
	rate rate
}

// rateTracker turns cumulative counters, keyed by handle, into bit/s from the deltas between the
// snapshots. It keeps one entry per live handle; forget drops the others.
type rateTracker struct {
	mu      sync.Mutex
	entries map[uint64]*rateEntry
}

func newRateTracker() *rateTracker { return &rateTracker{entries: map[uint64]*rateEntry{}} }

// update records c for key at now and returns the rate since the previous sample. A first sample
// has no rate (0); a sample sooner than minRateInterval after the last one returns the last rate;
// counters that went back (the handle got a new PeerConnection) start over.
func (t *rateTracker) update(key uint64, c counts, now time.Time) rate {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[key]
	if !ok {
		t.entries[key] = &rateEntry{at: now, last: c}
		return rate{}
	}
	dt := now.Sub(e.at)
	if dt < minRateInterval {
		return e.rate
	}
	if c.in < e.last.in || c.out < e.last.out {
		*e = rateEntry{at: now, last: c}
		return rate{}
	}
	e.rate = rate{in: bitsPerSecond(c.in-e.last.in, dt), out: bitsPerSecond(c.out-e.last.out, dt)}
	e.at, e.last = now, c
	return e.rate
}

// forget drops the entries of handles not in live.
func (t *rateTracker) forget(live map[uint64]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.entries {
		if !live[k] {
			delete(t.entries, k)
		}
	}
}

func bitsPerSecond(bytes uint64, dt time.Duration) uint64 {
	return uint64(float64(bytes) * 8 / dt.Seconds())
}
