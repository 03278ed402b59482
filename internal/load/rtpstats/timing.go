package rtpstats

import "time"

// HistogramBuckets is the number of 1 ms buckets of a Histogram; the last one holds everything from
// HistogramBuckets-1 ms up.
const HistogramBuckets = 501

// Histogram counts durations in 1 ms buckets (0…499 ms, then one bucket for 500 ms and more). It is
// a value: copies can be added and subtracted, so a window's histogram is the difference of two
// snapshots of running totals.
type Histogram struct {
	Buckets [HistogramBuckets]uint32
}

// Add counts one duration.
func (h *Histogram) Add(d time.Duration) {
	i := int(d / time.Millisecond)
	if i < 0 {
		i = 0
	}
	h.Buckets[min(i, HistogramBuckets-1)]++
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, n := range o.Buckets {
		h.Buckets[i] += n
	}
}

// Since returns h minus an earlier snapshot of the same running totals.
func (h *Histogram) Since(earlier *Histogram) Histogram {
	var out Histogram
	for i, n := range h.Buckets {
		out.Buckets[i] = n - earlier.Buckets[i]
	}
	return out
}

// Count is the number of durations counted.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Buckets {
		n += uint64(c)
	}
	return n
}

// QuantileMs returns the upper edge, in ms, of the bucket holding quantile q (0 < q ≤ 1), or -1
// for an empty histogram. 500 means 500 ms or more.
func (h *Histogram) QuantileMs(q float64) float64 {
	total := h.Count()
	if total == 0 {
		return -1
	}
	want := uint64(q*float64(total) + 0.5)
	want = max(want, 1)
	var seen uint64
	for i, c := range h.Buckets {
		seen += uint64(c)
		if seen >= want {
			return float64(min(i+1, HistogramBuckets-1))
		}
	}
	return HistogramBuckets - 1
}

// MaxMs is the upper edge of the highest non-empty bucket, in ms (500: 500 ms or more), or -1.
func (h *Histogram) MaxMs() float64 {
	for i := HistogramBuckets - 1; i >= 0; i-- {
		if h.Buckets[i] > 0 {
			return float64(min(i+1, HistogramBuckets-1))
		}
	}
	return -1
}

// TimingCounts are a Timing's running totals.
type TimingCounts struct {
	// Frames counted (every packet of an audio stream is one frame).
	Frames uint64
	// Late frames arrived more than one frame period later than their timestamp says they were
	// due (lateness above the period).
	Late uint64
	// Gaps are inter-arrival times above two periods: a frame arrived more than one period after
	// it would have followed its predecessor.
	Gaps uint64
	// Resyncs are timestamp jumps (over 10 s) after which the lateness reference starts anew.
	Resyncs uint64
	// Interarrival holds the times between consecutive arrivals; Lateness each frame's lateness.
	Interarrival Histogram
	Lateness     Histogram
}

// Since returns the counts accumulated after an earlier snapshot.
func (c *TimingCounts) Since(earlier *TimingCounts) TimingCounts {
	return TimingCounts{Frames: c.Frames - earlier.Frames, Late: c.Late - earlier.Late, Gaps: c.Gaps - earlier.Gaps,
		Resyncs: c.Resyncs - earlier.Resyncs, Interarrival: c.Interarrival.Since(&earlier.Interarrival),
		Lateness: c.Lateness.Since(&earlier.Lateness)}
}

// Merge adds o to c.
func (c *TimingCounts) Merge(o *TimingCounts) {
	c.Frames += o.Frames
	c.Late += o.Late
	c.Gaps += o.Gaps
	c.Resyncs += o.Resyncs
	c.Interarrival.Merge(&o.Interarrival)
	c.Lateness.Merge(&o.Lateness)
}

// Timing measures when a stream of fixed-duration frames (a mixer's output, or any audio stream)
// arrives against when it was due. A frame's transit is its arrival time minus its RTP timestamp
// (in time units); its lateness is its transit above the shortest transit of the last one to two
// seconds of arrivals. The reference moves, so one hiccup after which the sender carries on with
// continuous timestamps makes the frames late for at most two seconds, while a sender that keeps
// falling behind makes frames late all along. It allocates nothing.
type Timing struct {
	clock  int64 // RTP clock rate
	period time.Duration

	started bool
	lastAt  time.Duration
	lastTS  uint32
	extTS   int64 // unwrapped timestamp of the last frame, clock units

	blockStart time.Duration
	minCur     time.Duration
	minPrev    time.Duration
	havePrev   bool
	maxLate    time.Duration

	counts TimingCounts
}

// timingBlock is the length of the blocks whose minimum transit is the lateness reference (the
// reference is the lower of the current and the previous block's minimum).
const timingBlock = time.Second

// resyncJump is a timestamp jump that restarts the reference (a new source, not lateness).
const resyncJump = 10 * time.Second

// NewTiming measures a stream on an RTP clock of clockRate whose frames last period.
func NewTiming(clockRate uint32, period time.Duration) *Timing {
	return &Timing{clock: int64(max(clockRate, 1)), period: period}
}

// Observe accounts a frame with RTP timestamp ts that arrived at at.
func (t *Timing) Observe(ts uint32, at time.Duration) {
	t.counts.Frames++
	if !t.started {
		t.started = true
		t.lastAt, t.lastTS, t.extTS = at, ts, 0
		t.restart(at, t.transit(at))
		t.counts.Lateness.Add(0)
		return
	}
	gap := at - t.lastAt
	t.counts.Interarrival.Add(gap)
	if gap > 2*t.period {
		t.counts.Gaps++
	}
	step := int64(int32(ts - t.lastTS)) // modulo 2^32, so wrap-around and reordering work
	t.lastAt, t.lastTS = at, ts
	t.extTS += step
	d := t.transit(at)
	if jump := time.Duration(step * int64(time.Second) / t.clock); jump > resyncJump || jump < -resyncJump {
		t.counts.Resyncs++
		t.restart(at, d)
	}
	if at-t.blockStart >= timingBlock {
		t.minPrev, t.havePrev = t.minCur, true
		t.blockStart, t.minCur = at, d
	}
	t.minCur = min(t.minCur, d)
	ref := t.minCur
	if t.havePrev {
		ref = min(ref, t.minPrev)
	}
	late := d - ref
	t.counts.Lateness.Add(late)
	t.maxLate = max(t.maxLate, late)
	if late > t.period {
		t.counts.Late++
	}
}

func (t *Timing) transit(at time.Duration) time.Duration {
	return at - time.Duration(t.extTS*int64(time.Second)/t.clock)
}

func (t *Timing) restart(at, d time.Duration) {
	t.blockStart, t.minCur, t.havePrev = at, d, false
}

// Counts returns the running totals (a copy).
func (t *Timing) Counts() TimingCounts { return t.counts }

// MaxLateness is the largest lateness seen.
func (t *Timing) MaxLateness() time.Duration { return t.maxLate }
