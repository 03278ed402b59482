package report

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

// LayerTable renders an SFU run's per-session, per-layer metrics: packets sent towards the
// receiver, lost, the packet error rate and goodput.
func LayerTable(s metrics.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Layer policy **%s**.\n\n", s.Policy)
	b.WriteString("| session | layer | sent (pkts) | lost | PER | goodput (Mbit/s) | dropped by switch |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, ss := range s.Sessions {
		for _, l := range ss.Layers {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %d |\n", ss.Name, l.Layer, l.Sent, l.Lost,
				percent(l.PER), mbps(l.GoodputBps), l.SwitchDropped)
		}
	}
	return b.String()
}

func percent(x *float64) string {
	if x == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f%%", 100**x)
}

// layerPlotJobs draw goodput per layer and PER per layer over time (seed 000's figures 4 and 5),
// summed over the SFU's sessions.
func layerPlotJobs(dir string, r *Run) []func() error {
	tp := &chart{title: r.Summary.Scenario + " (" + r.Summary.Policy + "): goodput per layer", xLabel: "time (s)", yLabel: "Mbit/s"}
	per := &chart{title: r.Summary.Scenario + " (" + r.Summary.Policy + "): packet error rate per layer", xLabel: "time (s)", yLabel: "%"}
	for i, l := range r.Layers {
		name := fmt.Sprintf("layer %d", l.Layer)
		tp.addLine(name, series(l.T, l.GoodputBps, 1e-6), paletteColor(i), false)
		per.addPoints(name, series(l.PERT, l.PER, 100), paletteColor(i))
	}
	return append(saveJobs(tp, dir, "layers"), saveJobs(per, dir, "per")...)
}

// sfuCell aggregates a run over its sessions and layers: PER over all packets sent towards the
// receiver, and the total goodput.
func sfuCell(s metrics.Summary) (per float64, goodput float64, sessions, layers int) {
	var sent, lost int64
	for _, ss := range s.Sessions {
		layers = max(layers, len(ss.Layers))
		for _, l := range ss.Layers {
			sent += l.Sent
			lost += l.Lost
			goodput += l.GoodputBps
		}
	}
	per = math.NaN()
	if sent > 0 {
		per = float64(lost) / float64(sent)
	}
	return per, goodput, len(s.Sessions), layers
}

// sfuRuns returns an entry's runs when every one of them has an SFU.
func sfuRuns(e Entry) []*Run {
	var runs []*Run
	switch {
	case e.Err != nil:
		return nil
	case e.Sweep != nil:
		runs = e.Sweep.Runs
	case e.Run != nil:
		runs = []*Run{e.Run}
	}
	for _, r := range runs {
		if r == nil || r.Summary.Policy == "" {
			return nil
		}
	}
	return runs
}

// sfuGroup is the directory of an SFU entry: its runs make up one table per policy.
func sfuGroup(name string) string {
	if d := path.Dir(name); d != "." {
		return d
	}
	return name
}

// policyOrder puts the paper's original and proposal first.
var policyOrder = []string{"probe", "network", "bwe", "hybrid"}

// SFUTable renders seed 000's tables 1 and 2 from SFU runs: for each policy, the packet error
// rate (all layers of all sessions) per number of sessions (rows) and layers per session
// (columns), with the goodput delivered in parentheses.
func SFUTable(runs []*Run) string {
	type key struct {
		pol              string
		sessions, layers int
	}
	cells := map[key]string{}
	var pols []string
	maxS, maxL := 0, 0
	for _, r := range runs {
		per, good, n, l := sfuCell(r.Summary)
		k := key{r.Summary.Policy, n, l}
		txt := "–"
		if !math.IsNaN(per) {
			txt = fmt.Sprintf("%.1f%% (%.2f)", 100*per, good/1e6)
		}
		cells[k] = txt
		if !slices.Contains(pols, k.pol) {
			pols = append(pols, k.pol)
		}
		maxS, maxL = max(maxS, n), max(maxL, l)
	}
	slices.SortFunc(pols, func(a, b string) int { return rank(a) - rank(b) })
	var b strings.Builder
	for _, pol := range pols {
		fmt.Fprintf(&b, "**%s** — PER (goodput Mbit/s); rows: sessions, columns: layers per session\n\n| sessions |", pol)
		for l := 1; l <= maxL; l++ {
			fmt.Fprintf(&b, " %d |", l)
		}
		b.WriteString("\n|---:|" + strings.Repeat("---:|", maxL) + "\n")
		for n := 1; n <= maxS; n++ {
			row := fmt.Sprintf("| %d |", n)
			any := false
			for l := 1; l <= maxL; l++ {
				c, ok := cells[key{pol, n, l}]
				if !ok {
					c = ""
				}
				any = any || ok
				row += " " + c + " |"
			}
			if any {
				b.WriteString(row + "\n")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func rank(pol string) int {
	if i := slices.Index(policyOrder, pol); i >= 0 {
		return i
	}
	return len(policyOrder)
}

// groupSFU folds the entries whose runs all have an SFU into one pseudo-entry per directory (its
// runs together), keeping the other entries as they are, in order.
func groupSFU(entries []Entry) (plain []Entry, groups []string, runs map[string][]*Run) {
	runs = map[string][]*Run{}
	for _, e := range entries {
		rs := sfuRuns(e)
		if rs == nil {
			plain = append(plain, e)
			continue
		}
		g := sfuGroup(e.Name)
		if _, ok := runs[g]; !ok {
			groups = append(groups, g)
		}
		runs[g] = append(runs[g], rs...)
	}
	return plain, groups, runs
}
