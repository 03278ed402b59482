package report

import (
	"fmt"
	"strings"
)

// Node is what the sampler saw of one server of a run spread over several (a cluster's nodes,
// plan.Servers); Result.Server is then their sum.
type Node struct {
	Server           string  `json:"server"`
	PID              int     `json:"pid"`
	Sampled          bool    `json:"sampled"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	SteadyCPUSeconds float64 `json:"steady_cpu_seconds"`
	// SteadyCPUPct is SteadyCPUSeconds over the steady window, % of one core.
	SteadyCPUPct     float64 `json:"steady_cpu_pct"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	BaselineRSSBytes int64   `json:"baseline_rss_bytes"`
	SteadyRSSBytes   int64   `json:"steady_rss_bytes"`
	// Net counters are the node's own namespace's (every node has one in a cluster rig), over
	// the whole run: its clients' media and what it relays to and from other nodes.
	NetInBytes  uint64 `json:"net_in_bytes"`
	NetOutBytes uint64 `json:"net_out_bytes"`
}

// NodeSample is one node's part of a Sample: cumulative CPU since the start, memory, and its
// namespace's cumulative traffic.
type NodeSample struct {
	OK          bool
	CPUSec      float64
	RSSBytes    int64
	NetInBytes  uint64
	NetOutBytes uint64
}

// deriveNodes fills Nodes' figures (their Server, PID and Sampled are set by the run) from the
// samples, over the same steady window as the totals: a node's steady CPU runs from its first to
// its last reading inside the window (a reading it missed does not lose it the window).
func (r *Result) deriveNodes(steadyFrom float64) {
	a, _, steady := r.steady(steadyFrom)
	for i := range r.Nodes {
		n := &r.Nodes[i]
		var sum, count int64
		var first, last *Sample
		for j := range r.Samples {
			x := &r.Samples[j]
			if i >= len(x.Nodes) || !x.Nodes[i].OK {
				continue
			}
			s := x.Nodes[i]
			if n.BaselineRSSBytes == 0 && j == 0 {
				n.BaselineRSSBytes = s.RSSBytes
			}
			n.PeakRSSBytes = max(n.PeakRSSBytes, s.RSSBytes)
			n.CPUSeconds = max(n.CPUSeconds, s.CPUSec)
			n.NetInBytes, n.NetOutBytes = s.NetInBytes, s.NetOutBytes
			if steady && x.T >= a.T {
				sum += s.RSSBytes
				count++
				if first == nil {
					first = x
				}
				last = x
			}
		}
		if count > 0 {
			n.SteadyRSSBytes = sum / count
		}
		if first != nil && last.T > first.T {
			n.SteadyCPUSeconds = last.Nodes[i].CPUSec - first.Nodes[i].CPUSec
			n.SteadyCPUPct = 100 * n.SteadyCPUSeconds / (last.T - first.T)
		}
	}
}

// writeNodes tabulates each server of a run spread over several, with its subscriptions.
func writeNodes(b *strings.Builder, r *Result) {
	if len(r.Nodes) == 0 {
		return
	}
	subs := make([]int, len(r.Nodes))
	for _, s := range r.Subscriptions {
		if s.Owner < 0 && s.Server >= 0 && s.Server < len(subs) {
			subs[s.Server]++
		}
	}
	b.WriteString("\n## Nodes\n\n| node | PID | subscribers | CPU s (steady) | CPU % (steady) | RSS MB baseline / steady / peak | net in / out MB |\n|---|---:|---:|---:|---:|---|---|\n")
	for i, n := range r.Nodes {
		if !n.Sampled {
			fmt.Fprintf(b, "| %s | %d | %d | not sampled | | | |\n", n.Server, n.PID, subs[i])
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %d | %.2f (%.2f) | %.1f | %.1f / %.1f / %.1f | %.1f / %.1f |\n", n.Server, n.PID, subs[i], n.CPUSeconds, n.SteadyCPUSeconds,
			n.SteadyCPUPct, mb(n.BaselineRSSBytes), mb(n.SteadyRSSBytes), mb(n.PeakRSSBytes), mb(int64(n.NetInBytes)), mb(int64(n.NetOutBytes)))
	}
}
