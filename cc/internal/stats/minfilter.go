package stats

import "time"

// MaxMinFilterTaps bounds MinFilter's length so that it fits in a fixed array.
const MaxMinFilterTaps = 32

// MinFilter is the minimum of the last N samples (N ≤ MaxMinFilterTaps): NADA's 15-tap filter,
// LEDBAT's current-delay filter.
type MinFilter struct {
	taps  int
	n     int
	next  int
	value [MaxMinFilterTaps]time.Duration
}

// NewMinFilter returns a filter over the last taps samples, clamped to [1, MaxMinFilterTaps].
func NewMinFilter(taps int) MinFilter {
	taps = max(1, min(taps, MaxMinFilterTaps))
	return MinFilter{taps: taps}
}

// Add records a sample.
func (f *MinFilter) Add(v time.Duration) {
	f.value[f.next] = v
	f.next = (f.next + 1) % f.taps
	if f.n < f.taps {
		f.n++
	}
}

// Len is the number of samples held.
func (f *MinFilter) Len() int { return f.n }

// Reset forgets every sample.
func (f *MinFilter) Reset() { f.n, f.next = 0, 0 }

// Min is the smallest held sample, or 0 when empty.
func (f *MinFilter) Min() time.Duration {
	if f.n == 0 {
		return 0
	}
	m := f.value[0]
	for i := 1; i < f.n; i++ {
		m = min(m, f.value[i])
	}
	return m
}
