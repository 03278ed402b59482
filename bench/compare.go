package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/load/report"
)

// metric is one compared figure; lower is better for every one except those marked higher.
type metric struct {
	name   string
	value  func(*report.Result) float64
	format string
	higher bool
}

var metrics = []metric{
	{name: "server CPU in the steady window (s)", value: func(r *report.Result) float64 { return r.Server.SteadyCPUSeconds }, format: "%.2f"},
	{name: "forwarded (Mbit/s of RTP received)", value: func(r *report.Result) float64 { return r.Totals.ForwardedMbps }, format: "%.1f", higher: true},
	{name: "**CPU per forwarded gigabit (s/Gbit)**", value: func(r *report.Result) float64 { return r.Totals.CPUSecondsPerGbit }, format: "%.3f"},
	{name: "peak RSS (MB)", value: func(r *report.Result) float64 { return float64(r.Server.PeakRSSBytes) / (1 << 20) }, format: "%.1f"},
	{name: "**RSS per PeerConnection (kB)**", value: func(r *report.Result) float64 { return r.Totals.RSSPerPCBytes / 1024 }, format: "%.1f"},
	{name: "peak threads", value: func(r *report.Result) float64 { return float64(r.Server.PeakThreads) }, format: "%.0f"},
	{name: "mean loss (%)", value: func(r *report.Result) float64 { return 100 * r.Totals.MeanLossRatio }, format: "%.3f"},
	{name: "freezes (> 500 ms)", value: func(r *report.Result) float64 { return float64(r.Totals.Freezes) }, format: "%.0f"},
	{name: "subscriptions receiving every stream (%)", value: func(r *report.Result) float64 { return 100 * r.Totals.CompleteShare }, format: "%.1f", higher: true},
	{name: "mean time to first frame (ms)", value: func(r *report.Result) float64 { return r.Totals.MeanTTFFMs }, format: "%.0f"},
	{name: "generator CPU (s)", value: func(r *report.Result) float64 { return r.Generator.CPUSeconds }, format: "%.2f"},
	{name: "generator CPU per forwarded gigabit (s/Gbit)", value: func(r *report.Result) float64 { return r.Totals.GeneratorCPUSecondsPerGbit }, format: "%.3f"},
	{name: "generator/server CPU per gigabit (goal < 0.25)", value: func(r *report.Result) float64 { return r.Totals.GeneratorPerGbitShare }, format: "%.2f"},
}

// writeResults renders every outcome as markdown, writes it to RESULTS.md and returns it.
func writeResults(c config, outcomes []*outcome, args []string) string {
	var b strings.Builder
	m := report.DetectMachine()
	fmt.Fprintf(&b, "# Benchmarks: strata and Janus under the same load\n\n")
	fmt.Fprintf(&b, "Run %s on %s (%d cores, kernel %s), scale `%s`, hold %v per run.\n", time.Now().Format("2006-01-02 15:04 MST"), m.CPU, m.Cores, m.Kernel, c.scaleStr, c.scale.Hold)
	fmt.Fprintf(&b, "Command: `go run ./bench %s`. The load generator runs on the same machine; its CPU is listed.\n", strings.Join(args, " "))
	fmt.Fprintf(&b, "Machine load average (1 min) at the end of each run: %s.\n", loadAverages(c, outcomes))
	fmt.Fprintf(&b, "Ratios are strata/Janus: below 1 means strata uses less (for loss, freezes, CPU and memory) or, for the rows marked ↑, above 1 means strata does better.\n\n")
	writeGoals(&b, verdict(c, outcomes))
	for _, o := range outcomes {
		fmt.Fprintf(&b, "## %s\n\n", o.title)
		if o.name == "uplink" {
			writeUplink(&b, c, o.uplink)
			for _, n := range o.notes {
				fmt.Fprintf(&b, "- note: %s\n", n)
			}
			b.WriteString("\n")
			continue
		}
		if o.name == clusterScenario {
			writeCluster(&b, c, o)
			continue
		}
		if o.name == labSpeedScenario {
			writeLabSpeed(&b, c, o.lab)
			for _, n := range o.notes {
				fmt.Fprintf(&b, "- note: %s\n", n)
			}
			b.WriteString("\n")
			continue
		}
		if o.name == sipScenario {
			writeSIPScenario(&b, c, o)
			continue
		}
		if o.name == stressScenario || o.name == mcuScenario {
			writeAudioScenario(&b, c, o)
			continue
		}
		if isSweep(o.name) {
			writeSweep(&b, c, o)
		} else {
			writeComparison(&b, c, o, 0)
		}
		if o.name == streamingScenario {
			writeStreamingAgainstVideoroom(&b, c, o, outcomes)
		}
		if err := writeComparisonPlots(c, o); err != nil {
			o.notes = append(o.notes, "plots: "+err.Error())
		} else if isSweep(o.name) {
			fmt.Fprintf(&b, "Plots: `%[1]s/compare-cpu-per-gbit.svg`, `%[1]s/compare-rss-per-pc.svg`.\n\n", o.name)
		} else {
			fmt.Fprintf(&b, "Plots: `%[1]s/compare-cpu.svg`, `%[1]s/compare-memory.svg`, `%[1]s/compare-bandwidth.svg`.\n\n", o.name)
		}
		for _, n := range o.notes {
			fmt.Fprintf(&b, "- note: %s\n", n)
		}
		b.WriteString("\n")
	}
	md := b.String()
	_ = os.MkdirAll(c.out, 0o755)
	_ = os.WriteFile(filepath.Join(c.out, "RESULTS.md"), []byte(md), 0o644)
	return md
}

// writeComparison tabulates run i of each target.
func writeComparison(b *strings.Builder, c config, o *outcome, i int) {
	res := map[string]*report.Result{}
	for _, t := range c.targets {
		if runs := o.runs[t]; i < len(runs) {
			res[t] = runs[i]
		}
	}
	if len(res) == 0 {
		b.WriteString("No run completed.\n\n")
		return
	}
	b.WriteString("| metric |")
	for _, t := range c.targets {
		fmt.Fprintf(b, " %s |", t)
	}
	both := res["strata"] != nil && res["janus"] != nil
	if both {
		b.WriteString(" strata/Janus |")
	}
	b.WriteString("\n|---|")
	for range c.targets {
		b.WriteString("---:|")
	}
	if both {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, m := range metrics {
		name := m.name
		if m.higher {
			name += " ↑"
		}
		fmt.Fprintf(b, "| %s |", name)
		for _, t := range c.targets {
			if r := res[t]; r != nil {
				fmt.Fprintf(b, " "+m.format+" |", m.value(r))
			} else {
				b.WriteString(" – |")
			}
		}
		if both {
			fmt.Fprintf(b, " %s |", ratio(m.value(res["strata"]), m.value(res["janus"])))
		}
		b.WriteString("\n")
	}
	for _, t := range c.targets {
		if r := res[t]; r != nil {
			fmt.Fprintf(b, "\n%s: %d PeerConnections, %d failed joins, %d generator late skips; report in `%s/%s/%s/report.md`.\n",
				t, r.Totals.PeerConnections, r.Totals.FailedJoins, r.Generator.LateSkips, o.name, t, r.Plan.Name)
		}
	}
	b.WriteString("\n\n")
}

// isSweep reports whether the scenario is a fan-out sweep (N doubling until a run is not clean).
func isSweep(name string) bool { return name == "fanout" || name == streamingScenario }

// writeSweep tabulates the fan-out steps and compares the largest fan-out both servers carried
// cleanly.
func writeSweep(b *strings.Builder, c config, o *outcome) {
	b.WriteString("| N | target | forwarded Mbit/s | CPU s/Gbit | RSS/PC kB | loss % | freezes | complete % | generator CPU s | generator s/Gbit (× server) | load avg | clean |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	steps := 0
	for _, t := range c.targets {
		steps = max(steps, len(o.runs[t]))
	}
	common := -1
	for i := 0; i < steps; i++ {
		allClean := true
		for _, t := range c.targets {
			runs := o.runs[t]
			if i >= len(runs) {
				allClean = false
				continue
			}
			r := runs[i]
			fmt.Fprintf(b, "| %d | %s | %.1f | %.3f | %.1f | %.3f | %d | %.0f | %.2f | %.3f (%.2f) | %.1f | %v |\n", r.Plan.Receivers(), t,
				r.Totals.ForwardedMbps, r.Totals.CPUSecondsPerGbit, r.Totals.RSSPerPCBytes/1024, 100*r.Totals.MeanLossRatio,
				r.Totals.Freezes, 100*r.Totals.CompleteShare, r.Generator.CPUSeconds, r.Totals.GeneratorCPUSecondsPerGbit,
				r.Totals.GeneratorPerGbitShare, r.Machine.LoadAvg, clean(r))
			allClean = allClean && clean(r)
		}
		if allClean {
			common = i
		}
	}
	b.WriteString("\n")
	if common < 0 {
		b.WriteString("No fan-out step was clean on every target.\n\n")
		return
	}
	r := o.runs[c.targets[0]][common]
	fmt.Fprintf(b, "Comparison at N = %d, the largest fan-out every target carried cleanly:\n\n", r.Plan.Receivers())
	writeComparison(b, c, o, common)
}

// loadAverages lists the load average at the end of every run, so a busy machine shows.
func loadAverages(c config, outcomes []*outcome) string {
	var out []string
	for _, o := range outcomes {
		for _, t := range c.targets {
			for _, r := range o.runs[t] {
				out = append(out, fmt.Sprintf("%.1f", r.Machine.LoadAvg))
			}
		}
		for _, r := range o.uplink {
			out = append(out, fmt.Sprintf("%.1f", r.Summary.LoadMax))
		}
		if o.lab != nil {
			out = append(out, fmt.Sprintf("%.1f", o.lab.loadAfter))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, ", ")
}

// ratio formats a/b, or says why there is none.
func ratio(a, b float64) string {
	switch {
	case b == 0 && a == 0:
		return "= (both 0)"
	case b == 0 || math.IsNaN(a) || math.IsNaN(b):
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}
