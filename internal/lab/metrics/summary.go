package metrics

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// Summary is the content of summary.json.
type Summary struct {
	Scenario   string        `json:"scenario"`
	Engine     string        `json:"engine"`
	Seed       uint64        `json:"seed"`
	DurationS  float64       `json:"duration_s"`
	SweepParam string        `json:"sweep_param,omitempty"`
	SweepValue string        `json:"sweep_value,omitempty"`
	Flows      []FlowSummary `json:"flows"`
	Links      []LinkSummary `json:"links"`
	// JainIndex is Jain's index of the fair-share ratios of the media flows
	// that share the bottleneck most media flows share; null with fewer
	// than two such flows. JainIndexAll does the same over every flow.
	JainIndex    *float64 `json:"jain_index"`
	JainIndexAll *float64 `json:"jain_index_all"`
	Bottleneck   string   `json:"bottleneck,omitempty"`
	Events       uint64   `json:"events"`
	// Policy is the layer policy of the run's SFU and Sessions its sessions' per-layer metrics;
	// both are absent without an SFU.
	Policy   string           `json:"policy,omitempty"`
	Sessions []SessionSummary `json:"sessions,omitempty"`
}

// Delay holds queuing-delay percentiles in milliseconds.
type Delay struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Mean float64 `json:"mean"`
}

// FlowSummary is one flow's metrics.
type FlowSummary struct {
	Name           string   `json:"name"`
	Kind           string   `json:"kind"`
	CC             string   `json:"cc"`
	StartS         float64  `json:"start_s"`
	StopS          float64  `json:"stop_s"`
	ThroughputBps  float64  `json:"throughput_bps"`
	GoodputBps     float64  `json:"goodput_bps"`
	FairShareBps   float64  `json:"fair_share_bps"`
	FairShareRatio float64  `json:"fair_share_ratio"`
	LossRatio      float64  `json:"loss_ratio"`
	QueueDelayMs   Delay    `json:"queue_delay_ms"`
	RampupS        *float64 `json:"rampup_s"`
	Bottleneck     string   `json:"bottleneck,omitempty"`
}

// LinkSummary is one link's metrics.
type LinkSummary struct {
	Name          string  `json:"name"`
	From          string  `json:"from"`
	To            string  `json:"to"`
	Utilization   float64 `json:"utilization"`
	ThroughputBps float64 `json:"throughput_bps"`
	Drops         int64   `json:"drops"`
	RandomLosses  int64   `json:"random_losses"`
	ECNMarks      int64   `json:"ecn_marks"`
	QueueDelayMs  float64 `json:"queue_delay_mean_ms"`
}

// Meta identifies a run.
type Meta struct {
	Scenario   string
	Seed       uint64
	SweepParam string
	SweepValue string
}

// Summarize computes the summary of a finished run.
func Summarize(rec *Recording, meta Meta) Summary {
	cfg := rec.Config
	end := cfg.Duration
	shareLinks := make([]ShareLink, len(rec.Links))
	for i, ls := range rec.Links {
		for _, st := range ls.Rate {
			shareLinks[i].At = append(shareLinks[i].At, st.At)
			shareLinks[i].Bps = append(shareLinks[i].Bps, st.Bps)
		}
	}
	shareFlows := make([]ShareFlow, len(rec.Flows))
	for i, f := range rec.Flows {
		shareFlows[i] = ShareFlow{Start: f.Stats.Start, Stop: min(f.Stats.Stop, end), Links: f.Links, Demand: f.Demand}
	}
	shares, limits := FairShares(shareFlows, shareLinks, end)

	out := Summary{Scenario: meta.Scenario, Engine: rec.Engine, Seed: meta.Seed, DurationS: end.Seconds(),
		SweepParam: meta.SweepParam, SweepValue: meta.SweepValue, Events: rec.Events}
	for i, f := range rec.Flows {
		fs := flowSummary(f.Stats, shares[i], end, cfg.Interval)
		if limits[i] >= 0 {
			fs.Bottleneck = rec.Links[limits[i]].Name
		}
		out.Flows = append(out.Flows, fs)
	}
	for _, ls := range rec.Links {
		out.Links = append(out.Links, linkSummary(ls, end))
	}
	out.JainIndex, out.JainIndexAll, out.Bottleneck = jainByBottleneck(out.Flows)
	out.Sessions, out.Policy = rec.Sessions, rec.Policy
	if rec.Sessions == nil {
		out.Sessions, out.Policy = sessionSummaries(rec)
	}
	return out
}

func flowSummary(st *sim.FlowStats, share float64, end, interval time.Duration) FlowSummary {
	active := st.ActiveTime(end).Seconds()
	fs := FlowSummary{Name: st.Name, Kind: st.Kind, CC: st.CC, StartS: round(st.Start.Seconds(), 6),
		StopS: round(math.Min(st.Stop.Seconds(), end.Seconds()), 6), FairShareBps: math.Round(share)}
	if active > 0 {
		fs.ThroughputBps = math.Round(float64(st.RecvBytes) * 8 / active)
		fs.GoodputBps = math.Round(float64(st.GoodputBytes) * 8 / active)
	}
	if share > 0 {
		fs.FairShareRatio = round(float64(st.RecvBytes)*8/active/share, 4)
	}
	if st.SentPackets > 0 {
		fs.LossRatio = round(float64(st.Dropped)/float64(st.SentPackets), 5)
	}
	delays := sortedCopy(st.QueueDelays)
	if len(delays) > 0 {
		sum := 0.0
		for _, d := range delays {
			sum += d
		}
		fs.QueueDelayMs = Delay{P50: round(Percentile(delays, 50)*1e3, 3), P95: round(Percentile(delays, 95)*1e3, 3),
			Mean: round(sum/float64(len(delays))*1e3, 3)}
	}
	if r, ok := rampup(st, share, end, interval); ok {
		r = round(r, 3)
		fs.RampupS = &r
	}
	return fs
}

// rampup is the time from the flow's start until its received rate,
// averaged over a sliding 500 ms window, first reaches 90% of the smaller
// of its steady rate (mean over the second half of its active time) and its
// fair share.
func rampup(st *sim.FlowStats, share float64, end, interval time.Duration) (float64, bool) {
	stop := min(st.Stop, end)
	if stop <= st.Start {
		return 0, false
	}
	bin := func(t time.Duration) int { return min(int(t/interval), len(st.BinRecv)-1) }
	first, last := bin(st.Start), bin(stop-1)
	mid := bin(st.Start + (stop-st.Start)/2)
	var steadyBytes int64
	for b := mid; b <= last; b++ {
		steadyBytes += st.BinRecv[b]
	}
	steady := float64(steadyBytes) * 8 / (float64(last-mid+1) * interval.Seconds())
	target := steady
	if share > 0 && share < target {
		target = share
	}
	target *= 0.9
	if target <= 0 {
		return 0, false
	}
	w := max(1, int(500*time.Millisecond/interval))
	var window int64
	for b := first; b <= last; b++ {
		window += st.BinRecv[b]
		if b-first >= w {
			window -= st.BinRecv[b-w]
		}
		n := min(b-first+1, w)
		if float64(window)*8/(float64(n)*interval.Seconds()) >= target && b-first+1 >= w {
			t := (time.Duration(b+1)*interval - st.Start).Seconds()
			return math.Max(t, 0), true
		}
	}
	return 0, false
}

func linkSummary(ls *sim.LinkStats, end time.Duration) LinkSummary {
	out := LinkSummary{Name: ls.Name, From: ls.From, To: ls.To, Utilization: round(ls.Utilization(end), 5),
		ThroughputBps: math.Round(float64(ls.TxBytes) * 8 / end.Seconds()),
		Drops:         ls.Drops + ls.Losses, RandomLosses: ls.Losses, ECNMarks: ls.Marks}
	var sum float64
	var n int64
	for i := range ls.QDelaySum {
		sum += ls.QDelaySum[i].Seconds()
		n += int64(ls.QDelayN[i])
	}
	if n > 0 {
		out.QueueDelayMs = round(sum/float64(n)*1e3, 3)
	}
	return out
}

// isMedia says whether a flow kind carries real-time media: strata's senders and browsers.
func isMedia(kind string) bool { return kind == "media" || kind == "browser" }

// jainByBottleneck groups flows by their bottleneck link and computes
// Jain's index over the group with the most media flows (and over all flows
// of that link).
func jainByBottleneck(flows []FlowSummary) (media, all *float64, link string) {
	count := map[string]int{}
	order := []string{}
	for _, f := range flows {
		if f.Bottleneck == "" {
			continue
		}
		if _, seen := count[f.Bottleneck]; !seen {
			order = append(order, f.Bottleneck)
		}
		if isMedia(f.Kind) {
			count[f.Bottleneck]++
		} else {
			count[f.Bottleneck] += 0
		}
	}
	best := -1
	for _, l := range order {
		if count[l] > best {
			best, link = count[l], l
		}
	}
	var xm, xa []float64
	for _, f := range flows {
		if f.Bottleneck != link || link == "" {
			continue
		}
		xa = append(xa, f.FairShareRatio)
		if isMedia(f.Kind) {
			xm = append(xm, f.FairShareRatio)
		}
	}
	pick := func(xs []float64) *float64 {
		if len(xs) < 2 {
			return nil
		}
		j := Jain(xs)
		if math.IsNaN(j) {
			return nil
		}
		j = round(j, 4)
		return &j
	}
	return pick(xm), pick(xa), link
}
