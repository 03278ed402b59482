// Package metrics turns a finished simulation into the lab's metrics: the
// summary (throughput, fair-share ratio, loss, queuing delay percentiles,
// ramp-up time per flow; utilisation and drops per link; Jain's index) and
// the per-interval time series. docs/LAB.md defines every metric.
package metrics

import (
	"math"
	"sort"
	"time"
)

// ShareFlow is a flow as the fair-share computation sees it.
type ShareFlow struct {
	Start, Stop time.Duration
	Links       []int   // indices of the links on its forward path
	Demand      float64 // bit/s it can use at most; 0 = unlimited
}

// ShareLink is a link's capacity schedule.
type ShareLink struct {
	At  []time.Duration // step times, starting at 0
	Bps []float64
}

func (l ShareLink) rate(t time.Duration) float64 {
	r := 0.0
	for i, at := range l.At {
		if at <= t {
			r = l.Bps[i]
		}
	}
	return r
}

// FairShares computes each flow's max-min fair share of the network,
// averaged over its active time, and the link that limits it for the
// longest time (-1 if none). The network is piecewise constant between flow
// starts and stops and capacity steps; in each piece water-filling gives
// the max-min allocation.
func FairShares(flows []ShareFlow, links []ShareLink, end time.Duration) (share []float64, bottleneck []int) {
	cuts := []time.Duration{0, end}
	for _, f := range flows {
		cuts = append(cuts, f.Start, f.Stop)
	}
	for _, l := range links {
		cuts = append(cuts, l.At...)
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	bits := make([]float64, len(flows))
	limitedFor := make([]map[int]time.Duration, len(flows))
	for i := range limitedFor {
		limitedFor[i] = map[int]time.Duration{}
	}
	for i := 0; i+1 < len(cuts); i++ {
		t0, t1 := cuts[i], cuts[i+1]
		if t1 <= t0 || t0 >= end {
			continue
		}
		t1 = min(t1, end)
		alloc, by := waterfill(flows, links, t0)
		for f, a := range alloc {
			if a < 0 {
				continue
			}
			bits[f] += a * (t1 - t0).Seconds()
			if by[f] >= 0 {
				limitedFor[f][by[f]] += t1 - t0
			}
		}
	}
	share = make([]float64, len(flows))
	bottleneck = make([]int, len(flows))
	for f, fl := range flows {
		active := (min(fl.Stop, end) - fl.Start).Seconds()
		if active > 0 {
			share[f] = bits[f] / active
		}
		bottleneck[f] = -1
		var best time.Duration
		for l, d := range limitedFor[f] {
			if d > best || (d == best && l < bottleneck[f]) {
				best, bottleneck[f] = d, l
			}
		}
	}
	return share, bottleneck
}

// waterfill allocates rates to the flows active at t: alloc is -1 for
// inactive flows; by is the link that froze each flow, or -1 when its own
// demand did.
func waterfill(flows []ShareFlow, links []ShareLink, t time.Duration) (alloc []float64, by []int) {
	alloc = make([]float64, len(flows))
	by = make([]int, len(flows))
	remaining := make([]float64, len(links))
	for l := range links {
		remaining[l] = links[l].rate(t)
	}
	frozen := make([]bool, len(flows))
	open := 0
	for f, fl := range flows {
		by[f] = -1
		if t < fl.Start || t >= fl.Stop || len(fl.Links) == 0 {
			alloc[f], frozen[f] = -1, true
			continue
		}
		open++
	}
	level := 0.0 // every open flow has at least this much so far
	for open > 0 {
		// The next event is either a link filling up or a flow meeting its demand.
		inc, link, flow := math.Inf(1), -1, -1
		for l := range links {
			n := 0
			for f, fl := range flows {
				if !frozen[f] && uses(fl, l) {
					n++
				}
			}
			if n > 0 {
				if d := remaining[l] / float64(n); d < inc {
					inc, link, flow = d, l, -1
				}
			}
		}
		for f, fl := range flows {
			if !frozen[f] && fl.Demand > 0 {
				if d := fl.Demand - level; d < inc {
					inc, link, flow = d, -1, f
				}
			}
		}
		inc = math.Max(inc, 0)
		level += inc
		for f, fl := range flows {
			if !frozen[f] {
				for _, l := range fl.Links {
					remaining[l] -= inc
				}
			}
		}
		for f, fl := range flows {
			if frozen[f] {
				continue
			}
			if (flow == f) || (link >= 0 && uses(fl, link)) {
				alloc[f], frozen[f], by[f] = level, true, link
				open--
			}
		}
	}
	return alloc, by
}

func uses(f ShareFlow, link int) bool {
	for _, l := range f.Links {
		if l == link {
			return true
		}
	}
	return false
}
