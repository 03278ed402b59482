package report

import (
	"fmt"
	"strings"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

func mbps(x float64) string { return fmt.Sprintf("%.3f", x/1e6) }

func optional(x *float64, format string) string {
	if x == nil {
		return "–"
	}
	return fmt.Sprintf(format, *x)
}

// FlowTable renders the per-flow metrics as a markdown table.
func FlowTable(s metrics.Summary) string {
	var b strings.Builder
	b.WriteString("| flow | kind | cc | throughput (Mbit/s) | fair share (Mbit/s) | ratio | loss | queue delay p50 / p95 (ms) | ramp-up (s) |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range s.Flows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.3f | %.2f%% | %.1f / %.1f | %s |\n", f.Name, f.Kind, f.CC,
			mbps(f.ThroughputBps), mbps(f.FairShareBps), f.FairShareRatio, 100*f.LossRatio,
			f.QueueDelayMs.P50, f.QueueDelayMs.P95, optional(f.RampupS, "%.1f"))
	}
	return b.String()
}

// LinkTable renders the links that carried traffic.
func LinkTable(s metrics.Summary) string {
	var b strings.Builder
	b.WriteString("| link | utilization | throughput (Mbit/s) | drops | random losses | ECN marks | mean queue delay (ms) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, l := range s.Links {
		if l.ThroughputBps == 0 && l.Drops == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.3f | %s | %d | %d | %d | %.1f |\n", l.Name, l.Utilization, mbps(l.ThroughputBps),
			l.Drops, l.RandomLosses, l.ECNMarks, l.QueueDelayMs)
	}
	return b.String()
}

func jainLine(s metrics.Summary) string {
	return fmt.Sprintf("Jain's index on %s: media flows %s, all flows %s.", orDash(s.Bottleneck),
		optional(s.JainIndex, "%.3f"), optional(s.JainIndexAll, "%.3f"))
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// runMarkdown is one run's report; prefix is prepended to image paths.
func runMarkdown(r *Run, prefix string) string {
	s := r.Summary
	var b strings.Builder
	title := s.Scenario
	if s.SweepValue != "" {
		title += fmt.Sprintf(" (%s = %s)", s.SweepParam, s.SweepValue)
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if r.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(r.Description))
	}
	if r.Reference != "" {
		fmt.Fprintf(&b, "**Reference:** %s\n\n", strings.TrimSpace(r.Reference))
	}
	if s.Engine == "emu" {
		fmt.Fprintf(&b, "Engine emu (real network stacks), seed %d, %g s emulated.\n\n", s.Seed, s.DurationS)
	} else {
		fmt.Fprintf(&b, "Engine %s, seed %d, %g s simulated, %d events.\n\n", s.Engine, s.Seed, s.DurationS, s.Events)
	}
	b.WriteString(FlowTable(s))
	b.WriteString("\n")
	b.WriteString(LinkTable(s))
	b.WriteString("\n" + jainLine(s) + "\n\n")
	fmt.Fprintf(&b, "![rate per flow](%srate.svg)\n\n![queuing delay](%sdelay.svg)\n", prefix, prefix)
	if len(s.Sessions) > 0 {
		b.WriteString("\n" + LayerTable(s))
		if len(r.Layers) > 0 {
			fmt.Fprintf(&b, "\n![goodput per layer](%slayers.svg)\n\n![packet error rate per layer](%sper.svg)\n", prefix, prefix)
		}
	}
	return b.String()
}
