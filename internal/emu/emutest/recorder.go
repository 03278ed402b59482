package emutest

import (
	"sync"
	"time"
)

// Sample is one recorder call: its time and value (bytes, bit/s, bytes of window, seconds).
type Sample struct {
	At time.Duration
	V  float64
}

// Recorder keeps every call a flow makes (an endpoint.Recorder), stamped with its own clock, which
// also serves as the flow's (endpoint.Clock). It is safe for concurrent use.
type Recorder struct {
	Clock
	mu                         sync.Mutex
	goodput, target, cwnd, rtt []Sample
}

// NewRecorder is a recorder whose clock starts now.
func NewRecorder() *Recorder { return &Recorder{Clock: Clock{T0: time.Now()}} }

func (r *Recorder) add(s *[]Sample, v float64) {
	r.mu.Lock()
	*s = append(*s, Sample{r.Now(), v})
	r.mu.Unlock()
}

func (r *Recorder) Goodput(bytes int)     { r.add(&r.goodput, float64(bytes)) }
func (r *Recorder) Target(bps float64)    { r.add(&r.target, bps) }
func (r *Recorder) Cwnd(bytes float64)    { r.add(&r.cwnd, bytes) }
func (r *Recorder) RTT(rtt time.Duration) { r.add(&r.rtt, rtt.Seconds()) }

// Goodputs, Targets, Cwnds and RTTs are copies of what was recorded, in order.
func (r *Recorder) Goodputs() []Sample { return r.copyOf(r.goodput) }
func (r *Recorder) Targets() []Sample  { return r.copyOf(r.target) }
func (r *Recorder) Cwnds() []Sample    { return r.copyOf(r.cwnd) }
func (r *Recorder) RTTs() []Sample     { return r.copyOf(r.rtt) }

func (r *Recorder) copyOf(s []Sample) []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sample(nil), s...)
}

// Bytes is the goodput recorded in [from, to).
func (r *Recorder) Bytes(from, to time.Duration) float64 {
	sum, _ := Sum(r.Goodputs(), from, to)
	return sum
}

// Total is all the goodput recorded.
func (r *Recorder) Total() int {
	n := 0
	for _, s := range r.Goodputs() {
		n += int(s.V)
	}
	return n
}

// Rate is the goodput in bit/s over [from, to).
func (r *Recorder) Rate(from, to time.Duration) float64 {
	return r.Bytes(from, to) * 8 / (to - from).Seconds()
}

// Sum is the sum of the samples in [from, to) and their number.
func Sum(s []Sample, from, to time.Duration) (float64, int) {
	sum, n := 0.0, 0
	for _, x := range s {
		if x.At >= from && x.At < to {
			sum, n = sum+x.V, n+1
		}
	}
	return sum, n
}

// Mean is the mean of the samples in [from, to) and their number.
func Mean(s []Sample, from, to time.Duration) (float64, int) {
	sum, n := Sum(s, from, to)
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
