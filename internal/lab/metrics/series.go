package metrics

import (
	"math"
	"time"
)

// FlowSeries is one flow's per-interval time series. T is the start of each
// interval in seconds; rates are in bit/s; NaN marks "no value".
type FlowSeries struct {
	Name     string
	T        []float64
	Rate     []float64 // received bit/s (network-layer bytes)
	Goodput  []float64 // new payload bit/s
	Send     []float64 // sent bit/s
	Target   []float64 // controller target (media), carried forward
	Cwnd     []float64 // congestion window in bytes (tcp, ledbat), carried forward
	QDelayMs []float64 // mean queuing delay of packets delivered in the interval
	RTTMs    []float64 // latest RTT sample, carried forward
	Lost     []float64 // data packets lost in the interval
}

// LinkSeries is one link's per-interval time series.
type LinkSeries struct {
	Name        string
	T           []float64
	Capacity    []float64 // bit/s at the start of the interval
	Throughput  []float64 // bit/s transmitted
	Utilization []float64 // throughput over the interval's capacity
	QDelayMs    []float64 // mean wait of packets enqueued in the interval
	BacklogB    []float64 // largest backlog seen by an arriving packet, bytes
	Drops       []float64 // packets dropped (queue and random loss)
}

// Series extracts the time series of every flow and link.
func Series(rec *Recording) ([]FlowSeries, []LinkSeries) {
	cfg := rec.Config
	n := intervals(cfg)
	dt := cfg.Interval.Seconds()
	times := make([]float64, n)
	for i := range times {
		times[i] = round((time.Duration(i) * cfg.Interval).Seconds(), 6)
	}
	var flows []FlowSeries
	for _, f := range rec.Flows {
		st := f.Stats
		fs := FlowSeries{Name: st.Name, T: times}
		fs.Rate = perSecond(st.BinRecv[:n], dt)
		fs.Goodput = perSecond(st.BinGood[:n], dt)
		fs.Send = perSecond(st.BinSent[:n], dt)
		fs.Target = carry(st.BinTarget[:n])
		fs.Cwnd = carry(st.BinCwnd[:n])
		fs.RTTMs = scale(carry(st.BinRTT[:n]), 1e3)
		fs.QDelayMs = make([]float64, n)
		fs.Lost = make([]float64, n)
		for i := 0; i < n; i++ {
			fs.QDelayMs[i] = math.NaN()
			if st.BinQN[i] > 0 {
				fs.QDelayMs[i] = st.BinQDelay[i].Seconds() / float64(st.BinQN[i]) * 1e3
			}
			fs.Lost[i] = float64(st.BinLost[i])
		}
		flows = append(flows, fs)
	}
	var links []LinkSeries
	for _, ls := range rec.Links {
		out := LinkSeries{Name: ls.Name, T: times, Capacity: make([]float64, 0, n), Utilization: make([]float64, 0, n),
			QDelayMs: make([]float64, 0, n), BacklogB: make([]float64, 0, n), Drops: make([]float64, 0, n)}
		out.Throughput = perSecond(ls.Bytes[:n], dt)
		for i := 0; i < n; i++ {
			t0 := time.Duration(i) * cfg.Interval
			t1 := min(t0+cfg.Interval, cfg.Duration)
			out.Capacity = append(out.Capacity, ls.Rate.At(t0))
			u := math.NaN()
			if c := ls.Rate.Bits(t0, t1); c > 0 {
				u = float64(ls.Bytes[i]) * 8 / c
			}
			out.Utilization = append(out.Utilization, u)
			q := math.NaN()
			if ls.QDelayN[i] > 0 {
				q = ls.QDelaySum[i].Seconds() / float64(ls.QDelayN[i]) * 1e3
			}
			out.QDelayMs = append(out.QDelayMs, q)
			out.BacklogB = append(out.BacklogB, float64(ls.MaxBacklog[i]))
			out.Drops = append(out.Drops, float64(ls.DropsPerBin[i]))
		}
		links = append(links, out)
	}
	return flows, links
}

func perSecond(bytes []int64, dt float64) []float64 {
	out := make([]float64, len(bytes))
	for i, b := range bytes {
		out[i] = float64(b) * 8 / dt
	}
	return out
}

// carry fills NaN gaps with the last value seen (leading NaNs stay).
func carry(xs []float64) []float64 {
	out := make([]float64, len(xs))
	last := math.NaN()
	for i, x := range xs {
		if !math.IsNaN(x) {
			last = x
		}
		out[i] = last
	}
	return out
}

func scale(xs []float64, k float64) []float64 {
	for i := range xs {
		xs[i] *= k
	}
	return xs
}
