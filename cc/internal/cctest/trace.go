package cctest

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Sample is the state of a run at one sampling instant.
type Sample struct {
	At         time.Duration
	Target     cc.Bitrate // rate controllers: TargetRate
	Cwnd       int        // window controllers: Cwnd
	QueueDelay time.Duration
	// Delivered is the rate at which bytes reached the receiver during the interval ending At.
	Delivered cc.Bitrate
	State     cc.State
}

// Trace is what a run records.
type Trace struct {
	Samples []Sample
	Sent    int // packets sent (retransmissions included)
	Dropped int // packets dropped at the bottleneck
}

func (t *Trace) between(from, to time.Duration) []Sample {
	var out []Sample
	for _, s := range t.Samples {
		if s.At > from && s.At <= to {
			out = append(out, s)
		}
	}
	return out
}

// MeanTarget is the average target rate over (from, to].
func (t *Trace) MeanTarget(from, to time.Duration) cc.Bitrate {
	return cc.Bitrate(mean(t.between(from, to), func(s Sample) float64 { return s.Target.Bps() }))
}

// MeanDelivered is the average delivered rate over (from, to].
func (t *Trace) MeanDelivered(from, to time.Duration) cc.Bitrate {
	return cc.Bitrate(mean(t.between(from, to), func(s Sample) float64 { return s.Delivered.Bps() }))
}

// MeanQueueDelay is the average bottleneck queuing delay over (from, to].
func (t *Trace) MeanQueueDelay(from, to time.Duration) time.Duration {
	return time.Duration(mean(t.between(from, to), func(s Sample) float64 { return float64(s.QueueDelay) }))
}

// MaxQueueDelay is the largest sampled queuing delay over (from, to].
func (t *Trace) MaxQueueDelay(from, to time.Duration) time.Duration {
	var m time.Duration
	for _, s := range t.between(from, to) {
		m = max(m, s.QueueDelay)
	}
	return m
}

func mean(ss []Sample, f func(Sample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	var sum float64
	for _, s := range ss {
		sum += f(s)
	}
	return sum / float64(len(ss))
}

// String renders the trace once per second, for test failure messages.
func (t *Trace) String() string {
	var b strings.Builder
	for _, s := range t.Samples {
		if s.At%time.Second != 0 {
			continue
		}
		fmt.Fprintf(&b, "t=%3.0fs target=%8.0fk cwnd=%6d delivered=%8.0fk q=%6.1fms %s/%s usage=%s x=%.1f thr=%.1f\n",
			s.At.Seconds(), s.Target.Kbps(), s.Cwnd, s.Delivered.Kbps(), float64(s.QueueDelay)/1e6,
			s.State.Phase, s.State.Probe, s.State.Usage, s.State.DelayGradientMs+s.State.SignalMs, s.State.ThresholdMs)
	}
	return b.String()
}
