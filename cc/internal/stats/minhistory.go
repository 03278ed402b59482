package stats

import "time"

// MaxHistoryBuckets bounds MinHistory's length so that it fits in a fixed array.
const MaxHistoryBuckets = 64

// MinHistory is a long-term minimum kept as the minima of the last N time buckets (RFC 6817's
// base-delay history: 10 one-minute buckets). A new bucket starts whenever a sample falls in a
// later bucket than the newest one; a sample from the past only updates the newest bucket.
type MinHistory struct {
	width   time.Duration
	buckets int
	n       int
	newest  int   // ring index of the newest bucket
	index   int64 // absolute bucket number of the newest bucket
	mins    [MaxHistoryBuckets]time.Duration
}

// NewMinHistory returns a history of buckets buckets (clamped to [1, MaxHistoryBuckets]) of the
// given width (at least 1 ns).
func NewMinHistory(buckets int, width time.Duration) MinHistory {
	return MinHistory{width: max(width, 1), buckets: max(1, min(buckets, MaxHistoryBuckets))}
}

// Add records sample v at time now.
func (h *MinHistory) Add(now, v time.Duration) {
	b := floorDiv(int64(now), int64(h.width))
	switch {
	case h.n == 0:
		h.n, h.newest, h.index, h.mins[0] = 1, 0, b, v
	case b > h.index:
		h.newest = (h.newest + 1) % h.buckets
		h.mins[h.newest] = v
		h.index = b
		if h.n < h.buckets {
			h.n++
		}
	default:
		h.mins[h.newest] = min(h.mins[h.newest], v)
	}
}

// Len is the number of buckets held.
func (h *MinHistory) Len() int { return h.n }

// Reset forgets every sample.
func (h *MinHistory) Reset() { h.n = 0 }

// Min is the minimum over every held bucket, or 0 when empty.
func (h *MinHistory) Min() time.Duration {
	if h.n == 0 {
		return 0
	}
	m := h.mins[h.newest]
	for i := 0; i < h.n; i++ {
		m = min(m, h.mins[(h.newest-i+h.buckets)%h.buckets])
	}
	return m
}
