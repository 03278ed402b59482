package main

import (
	"errors"
	"image/color"
	"path/filepath"

	"github.com/strata-rtc/strata/internal/load/report"
)

// targetColor keeps one colour per server across every comparison plot.
func targetColor(name string) color.Color {
	switch name {
	case "janus":
		return report.GeneratorColor
	case referenceTarget:
		return report.OutColor
	}
	return report.ServerColor
}

// writeComparisonPlots draws the servers on shared axes: for a single-run scenario, CPU, memory
// and outgoing bandwidth against participants (seed 001's figures, one line per server); for the
// fan-out sweep, CPU per forwarded gigabit and memory per PeerConnection against N.
func writeComparisonPlots(c config, o *outcome) error {
	dir := filepath.Join(c.out, o.name)
	if isSweep(o.name) {
		return writeSweepPlots(c, o, dir)
	}
	type fig struct {
		base, title, unit string
		y                 func(report.Sample) (float64, bool)
	}
	figs := []fig{
		{"compare-cpu", "server CPU", "CPU (% of one core)", func(s report.Sample) (float64, bool) { return s.ServerCPUPct, s.ServerOK }},
		{"compare-memory", "server memory (RSS)", "MB", func(s report.Sample) (float64, bool) { return float64(s.ServerRSSBytes) / (1 << 20), s.ServerOK }},
		{"compare-bandwidth", "out of the server (RTP received by clients)", "Mbit/s", func(s report.Sample) (float64, bool) { return s.RecvMbps, true }},
	}
	var errs []error
	for _, f := range figs {
		var lines []report.Line
		for _, t := range c.targets {
			if len(o.runs[t]) == 0 {
				continue
			}
			l := report.Line{Name: t, Color: targetColor(t)}
			for _, s := range o.runs[t][0].Samples {
				if y, ok := f.y(s); ok {
					l.X, l.Y = append(l.X, float64(s.Participants())), append(l.Y, y)
				}
			}
			lines = append(lines, l)
		}
		errs = append(errs, report.PlotLines(filepath.Join(dir, f.base), o.name+": "+f.title, "participants", f.unit, lines))
	}
	return errors.Join(errs...)
}

func writeSweepPlots(c config, o *outcome, dir string) error {
	var cpu, mem []report.Line
	for _, t := range c.targets {
		lc := report.Line{Name: t, Color: targetColor(t)}
		lm := lc
		for _, r := range o.runs[t] {
			n := float64(r.Plan.Receivers())
			if r.Totals.CPUSecondsPerGbit > 0 {
				lc.X, lc.Y = append(lc.X, n), append(lc.Y, r.Totals.CPUSecondsPerGbit)
			}
			lm.X, lm.Y = append(lm.X, n), append(lm.Y, r.Totals.RSSPerPCBytes/1024)
		}
		cpu, mem = append(cpu, lc), append(mem, lm)
	}
	return errors.Join(
		report.PlotLines(filepath.Join(dir, "compare-cpu-per-gbit"), o.name+": server CPU per forwarded gigabit", "receivers", "CPU s per Gbit", cpu),
		report.PlotLines(filepath.Join(dir, "compare-rss-per-pc"), o.name+": server memory per PeerConnection", "receivers", "kB per PeerConnection", mem),
	)
}
