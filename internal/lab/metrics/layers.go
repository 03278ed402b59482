package metrics

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// SessionSummary is one SFU session's per-layer metrics (seed 000's tables).
type SessionSummary struct {
	Name   string         `json:"name"`
	Layers []LayerSummary `json:"layers"`
}

// LayerSummary is one layer of a session between the SFU and the receiver. PER is the packet
// error rate: packets of the layer lost over packets of the layer sent towards the receiver
// (null when none were sent); packets sent in the last inFlightMargin of the run are left out
// because they may still be in flight. SwitchDropped counts packets the controller's switch
// dropped before the receiver path (not losses: the controller's decision).
type LayerSummary struct {
	Layer         int      `json:"layer"`
	Sent          int64    `json:"sent"`
	Lost          int64    `json:"lost"`
	SwitchDropped int64    `json:"switch_dropped"`
	PER           *float64 `json:"per"`
	GoodputBps    float64  `json:"goodput_bps"`
}

// inFlightMargin: packets sent this close to the end of the run are not counted in PER.
const inFlightMargin = 500 * time.Millisecond

func sessionSummaries(rec *Recording) ([]SessionSummary, string) {
	sessions, flows, pol := rec.sessions()
	end := rec.Config.Duration
	var out []SessionSummary
	for i, st := range sessions {
		active := flows[i].ActiveTime(end).Seconds()
		sum := SessionSummary{Name: st.Name}
		for i, l := range st.Layers {
			ls := LayerSummary{Layer: i + 1, SwitchDropped: l.SwitchDropped}
			sent, recv := countUntil(l, st.Interval(), end-inFlightMargin)
			ls.Sent, ls.Lost = sent, sent-recv
			if sent > 0 {
				per := round(float64(sent-recv)/float64(sent), 6)
				ls.PER = &per
			}
			if active > 0 {
				ls.GoodputBps = math.Round(float64(l.GoodputBytes) * 8 / active)
			}
			sum.Layers = append(sum.Layers, ls)
		}
		out = append(out, sum)
	}
	return out, pol
}

// countUntil counts a layer's packets sent before until, and how many of them arrived.
func countUntil(l sim.LayerStats, interval, until time.Duration) (sent, recv int64) {
	last := min(int(until/interval), len(l.BinSent))
	for b := 0; b < last; b++ {
		sent += int64(l.BinSent[b])
		recv += int64(l.BinRecvOfSent[b])
	}
	return sent, recv
}

// LayerSeries is one layer's time series summed over the SFU's sessions (the shape of seed 000's
// figures 4 and 5): goodput per interval, and PER over one-second windows by send time.
type LayerSeries struct {
	Layer      int
	T          []float64
	GoodputBps []float64
	// PERT are the starts of the one-second PER windows; PER is NaN where nothing was sent.
	PERT, PER []float64
}

// LayerSeriesOf extracts the per-layer series of a run's SFU sessions (nil without any).
func LayerSeriesOf(rec *Recording) []LayerSeries {
	sessions, _, _ := rec.sessions()
	if len(sessions) == 0 {
		return nil
	}
	cfg := rec.Config
	n := intervals(cfg)
	dt := cfg.Interval.Seconds()
	per := max(1, int(time.Second/cfg.Interval))
	layers := 0
	for _, st := range sessions {
		layers = max(layers, len(st.Layers))
	}
	out := make([]LayerSeries, layers)
	for li := range out {
		ls := LayerSeries{Layer: li + 1, T: make([]float64, n), GoodputBps: make([]float64, n)}
		sent := make([]int64, (n+per-1)/per)
		recv := make([]int64, len(sent))
		for b := 0; b < n; b++ {
			ls.T[b] = round((time.Duration(b) * cfg.Interval).Seconds(), 6)
		}
		for _, st := range sessions {
			if li >= len(st.Layers) {
				continue
			}
			l := st.Layers[li]
			for b := 0; b < n; b++ {
				ls.GoodputBps[b] += float64(l.BinGood[b]*8) / dt
				sent[b/per] += int64(l.BinSent[b])
				recv[b/per] += int64(l.BinRecvOfSent[b])
			}
		}
		for w := range sent {
			ls.PERT = append(ls.PERT, ls.T[w*per])
			v := math.NaN()
			if sent[w] > 0 && time.Duration(w+1)*time.Duration(per)*cfg.Interval <= cfg.Duration-inFlightMargin {
				v = float64(sent[w]-recv[w]) / float64(sent[w])
			}
			ls.PER = append(ls.PER, v)
		}
		out[li] = ls
	}
	return out
}
