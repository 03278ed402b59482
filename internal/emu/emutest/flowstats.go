package emutest

import (
	"fmt"
	"slices"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// LinkUse is the fraction of a link of rate bits/s that a flow's delivered bytes took between
// from and to, from the link's 100 ms bins.
func LinkUse(fs *sim.FlowStats, rate float64, from, to time.Duration) float64 {
	var bytes int64
	bins := 0
	for i, b := range fs.BinRecv {
		at := time.Duration(i) * 100 * time.Millisecond
		if at >= from && at+100*time.Millisecond <= to {
			bytes += b
			bins++
		}
	}
	if bins == 0 {
		return 0
	}
	return float64(bytes) * 8 / (float64(bins) * 0.1) / rate
}

// QueueQuantile is the p-quantile of queuing delays in seconds, as a flow's QueueDelays holds
// them (0 for none).
func QueueQuantile(q []float32, p float64) time.Duration {
	if len(q) == 0 {
		return 0
	}
	s := slices.Clone(q)
	slices.Sort(s)
	return time.Duration(float64(s[int(float64(len(s)-1)*p)]) * float64(time.Second))
}

// LEDBATAlone is what a low-priority transfer alone on a link did: the share of the link it used
// after its first 3 s, and its queuing delay after the first fifth of the packets (once the window
// has grown).
type LEDBATAlone struct {
	Use         float64
	Median, P95 time.Duration
}

// MeasureLEDBATAlone measures a transfer of elapsed time on a link of rate bits/s.
func MeasureLEDBATAlone(fs *sim.FlowStats, rate float64, elapsed time.Duration) LEDBATAlone {
	q := fs.QueueDelays[len(fs.QueueDelays)/5:]
	return LEDBATAlone{Use: LinkUse(fs, rate, 3*time.Second, elapsed), Median: QueueQuantile(q, 0.5), P95: QueueQuantile(q, 0.95)}
}

// Claims lists how the transfer failed LEDBAT's promise alone on a link: use at least minUse of
// it, and keep a queue near the target (median above a quarter of it, p95 within 40 ms over it).
func (r LEDBATAlone) Claims(target time.Duration, minUse float64) []string {
	var fails []string
	if r.Use < minUse {
		fails = append(fails, fmt.Sprintf("the transfer used %.0f%% of the link alone, want ≥ %.0f%%", 100*r.Use, 100*minUse))
	}
	if r.P95 > target+40*time.Millisecond {
		fails = append(fails, fmt.Sprintf("queuing delay p95 %v, want ≤ target %v + 40 ms", r.P95, target))
	}
	if r.Median < target/4 {
		fails = append(fails, fmt.Sprintf("queuing delay median %v: LEDBAT should build a queue up to its target %v", r.Median, target))
	}
	return fails
}
