package emu

import (
	"math"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// clock is the run's clock: time since t0, the instant the network's links
// and stats bins started.
type clock struct{ t0 time.Time }

func (c clock) Now() time.Duration { return time.Since(c.t0) }

// recorder is an endpoint.Recorder: it keeps what only the endpoints know in
// the simulator's per-interval shape, so that the engine can copy it into
// the flow's sim.FlowStats (BinGood, GoodputBytes, BinTarget, BinCwnd,
// BinRTT) beside the network-side figures.
type recorder struct {
	clock    clock
	interval time.Duration

	mu      sync.Mutex
	good    int64
	binGood []int64
	target  []float64
	cwnd    []float64
	rtt     []float64
}

func newRecorder(c clock, bins int, interval time.Duration) *recorder {
	return &recorder{clock: c, interval: interval, binGood: make([]int64, bins),
		target: nanSlice(bins), cwnd: nanSlice(bins), rtt: nanSlice(bins)}
}

func nanSlice(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// bin is the interval of the current time; calls after the run's end land
// in the last interval, as in the simulator.
func (r *recorder) bin() int {
	b := int(r.clock.Now() / r.interval)
	return min(max(b, 0), len(r.binGood)-1)
}

func (r *recorder) Goodput(bytes int) {
	r.mu.Lock()
	r.good += int64(bytes)
	r.binGood[r.bin()] += int64(bytes)
	r.mu.Unlock()
}

func (r *recorder) set(series []float64, v float64) {
	r.mu.Lock()
	series[r.bin()] = v
	r.mu.Unlock()
}

func (r *recorder) Target(bps float64)    { r.set(r.target, bps) }
func (r *recorder) Cwnd(bytes float64)    { r.set(r.cwnd, bytes) }
func (r *recorder) RTT(rtt time.Duration) { r.set(r.rtt, rtt.Seconds()) }

// fill copies the endpoint figures into st.
func (r *recorder) fill(st *sim.FlowStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st.GoodputBytes = r.good
	copy(st.BinGood, r.binGood)
	copy(st.BinTarget, r.target)
	copy(st.BinCwnd, r.cwnd)
	copy(st.BinRTT, r.rtt)
}
