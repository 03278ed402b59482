package sim

import (
	"fmt"
	"math"
	"time"
)

// Never is a time later than any simulation.
const Never = time.Duration(math.MaxInt64)

// RateStep sets a link's capacity from At onwards.
type RateStep struct {
	At  time.Duration
	Bps float64
}

// RateSchedule is a piecewise-constant capacity over time. The first step is
// at time zero; steps are in increasing time order.
type RateSchedule []RateStep

// ConstantRate is a schedule with one rate for the whole run.
func ConstantRate(bps float64) RateSchedule { return RateSchedule{{0, bps}} }

// Validate checks the schedule's shape.
func (r RateSchedule) Validate() error {
	if len(r) == 0 {
		return fmt.Errorf("empty rate schedule")
	}
	if r[0].At != 0 {
		return fmt.Errorf("rate schedule must start at 0s")
	}
	for i, s := range r {
		if s.Bps < 0 || math.IsNaN(s.Bps) || math.IsInf(s.Bps, 0) {
			return fmt.Errorf("invalid rate %v at %v", s.Bps, s.At)
		}
		if i > 0 && s.At <= r[i-1].At {
			return fmt.Errorf("rate schedule times must increase (%v after %v)", s.At, r[i-1].At)
		}
	}
	return nil
}

// At returns the capacity at time t.
func (r RateSchedule) At(t time.Duration) float64 {
	i := len(r) - 1
	for i > 0 && r[i].At > t {
		i--
	}
	return r[i].Bps
}

// Bits returns the number of bits the schedule can carry in [from, to).
func (r RateSchedule) Bits(from, to time.Duration) float64 {
	total := 0.0
	for i, s := range r {
		segEnd := Never
		if i+1 < len(r) {
			segEnd = r[i+1].At
		}
		a, b := max(from, s.At), min(to, segEnd)
		if b > a {
			total += s.Bps * (b - a).Seconds()
		}
	}
	return total
}

// cursor walks a schedule forward in time; finish times are computed from
// non-decreasing start times, so the walk is amortised O(1).
type cursor struct {
	sched    RateSchedule
	i        int
	nsPerBit []float64 // per step: 1e9/rate, or 0 for an outage
}

func newCursor(s RateSchedule) cursor {
	c := cursor{sched: s, nsPerBit: make([]float64, len(s))}
	for i, st := range s {
		if st.Bps > 0 {
			c.nsPerBit[i] = 1e9 / st.Bps
		}
	}
	return c
}

func (c *cursor) rate(t time.Duration) float64 {
	c.seek(t)
	return c.sched[c.i].Bps
}

func (c *cursor) seek(t time.Duration) {
	for c.i+1 < len(c.sched) && c.sched[c.i+1].At <= t {
		c.i++
	}
}

// finish returns when a transmission of bits that starts at start ends,
// following capacity changes (including outages at rate zero) exactly.
func (c *cursor) finish(start time.Duration, bits float64) time.Duration {
	c.seek(start)
	t := start
	for i := c.i; ; i++ {
		rate := c.sched[i].Bps
		segEnd := Never
		if i+1 < len(c.sched) {
			segEnd = c.sched[i+1].At
		}
		if rate > 0 {
			need := time.Duration(math.Ceil(bits * c.nsPerBit[i]))
			if segEnd == Never || t+need <= segEnd {
				return t + need
			}
			bits -= rate * (segEnd - t).Seconds()
		}
		if segEnd == Never {
			return Never
		}
		t = segEnd
	}
}
