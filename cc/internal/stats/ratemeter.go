package stats

import "time"

// RateMeter measures the byte rate over a sliding window, in fixed-width time buckets so that it
// never allocates after construction. Samples older than the window are dropped; samples may
// arrive out of order within the window.
type RateMeter struct {
	bucket  time.Duration
	sums    []int64
	head    int64 // absolute index of the newest bucket
	total   int64
	first   time.Duration
	started bool
}

// NewRateMeter returns a meter over window, split into buckets buckets (at least 1).
func NewRateMeter(window time.Duration, buckets int) RateMeter {
	if buckets < 1 {
		buckets = 1
	}
	if window < time.Duration(buckets) {
		window = time.Duration(buckets)
	}
	return RateMeter{bucket: window / time.Duration(buckets), sums: make([]int64, buckets)}
}

// Window is the meter's window.
func (m *RateMeter) Window() time.Duration { return m.bucket * time.Duration(len(m.sums)) }

// Reset forgets every sample.
func (m *RateMeter) Reset() {
	clear(m.sums)
	m.total, m.started = 0, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func (m *RateMeter) slot(b int64) int {
	n := int64(len(m.sums))
	return int(((b % n) + n) % n)
}

// advance moves the newest bucket to b, clearing the buckets that fall out of the window.
func (m *RateMeter) advance(b int64) {
	if b <= m.head {
		return
	}
	n := int64(len(m.sums))
	if b-m.head >= n {
		clear(m.sums)
		m.total = 0
	} else {
		for i := m.head + 1; i <= b; i++ {
			s := m.slot(i)
			m.total -= m.sums[s]
			m.sums[s] = 0
		}
	}
	m.head = b
}

// Add records bytes at time t.
func (m *RateMeter) Add(t time.Duration, bytes int) {
	if bytes <= 0 {
		return
	}
	b := floorDiv(int64(t), int64(m.bucket))
	if !m.started {
		m.started, m.head, m.first = true, b, t
	}
	if t < m.first {
		m.first = t
	}
	m.advance(b)
	if b <= m.head-int64(len(m.sums)) {
		return // older than the window
	}
	m.sums[m.slot(b)] += int64(bytes)
	m.total += int64(bytes)
}

// Rate returns the rate in bit/s over the window ending at now. It reports ok=false until samples
// span at least half the window, so that one early packet does not read as a huge rate.
func (m *RateMeter) Rate(now time.Duration) (bps float64, ok bool) {
	if !m.started {
		return 0, false
	}
	m.advance(floorDiv(int64(now), int64(m.bucket)))
	window := m.Window()
	span := now - m.first
	if span < window/2 {
		return 0, false
	}
	if span > window {
		span = window
	}
	return float64(m.total) * 8 / span.Seconds(), true
}

// Sum is the total of the samples within the window ending at now.
func (m *RateMeter) Sum(now time.Duration) int64 {
	if !m.started {
		return 0
	}
	m.advance(floorDiv(int64(now), int64(m.bucket)))
	return m.total
}
