package emutest

import (
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
