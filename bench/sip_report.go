package main

import (
	"fmt"
	"strings"

	"github.com/strata-rtc/strata/internal/load/report"
)

// sipStep is one step of the sip scenario with the figures per call.
type sipStep struct {
	point
	// CPUPerCallMinute is the server's CPU seconds per minute of call at this step.
	CPUPerCallMinute float64
	// RSSPerCall is the step's RSS above the idle server's, per call (point.RSSPerParticipant).
}

func sipSteps(r *report.Result) []sipStep {
	var out []sipStep
	for _, p := range points(r) {
		s := sipStep{point: p}
		if p.Participants > 0 {
			s.CPUPerCallMinute = p.ServerCPUPct / 100 * 60 / float64(p.Participants)
		}
		out = append(out, s)
	}
	return out
}

// writeSIPScenario tabulates each server's steps, unless its callers did not get their audio back
// (then it says why and gives no figures), compares the servers at the largest step both carried,
// and draws seed 001's Fig. 7 and 8 (CPU and memory, traffic in and out, against calls).
func writeSIPScenario(b *strings.Builder, c config, o *outcome) {
	healthy := &outcome{name: o.name, runs: map[string][]*report.Result{}}
	per := map[string][]sipStep{}
	for _, t := range c.targets {
		runs := o.runs[t]
		if len(runs) == 0 {
			fmt.Fprintf(b, "%s: no run completed.\n\n", t)
			continue
		}
		r := runs[0]
		if err := r.SIPCheck(); err != nil {
			fmt.Fprintf(b, "**%s**: broken run, no figures (report in `%s/%s/%s/report.md`): %s.\n\n", t, o.name, t, r.Plan.Name,
				strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		healthy.runs[t] = runs[:1]
		per[t] = sipSteps(r)
		writeSIPTable(b, o, t, r, per[t])
	}
	writeSIPComparison(b, per)
	if err := writeAudioPlots(c, healthy); err != nil {
		o.notes = append(o.notes, "plots: "+err.Error())
	} else {
		fmt.Fprintf(b, "Plots (one point a step): `%[1]s/compare-cpu.svg`, `%[1]s/compare-memory.svg`, `%[1]s/compare-bandwidth.svg`.\n\n", o.name)
	}
	for _, n := range o.notes {
		fmt.Fprintf(b, "- note: %s\n", n)
	}
	b.WriteString("\n")
}

func writeSIPTable(b *strings.Builder, o *outcome, t string, r *report.Result, steps []sipStep) {
	s := r.Totals.SIP
	fmt.Fprintf(b, "**%s** (report in `%s/%s/%s/report.md`, idle RSS %.1f MB, %d threads at the peak): %d calls, set-up (call → accepted) mean %.0f ms, max %.0f ms; "+
		"%.2f %% of the audio sent came back bit for bit, round trip mean %.1f ms, max %.0f ms",
		t, o.name, t, r.Plan.Name, float64(r.Server.BaselineRSSBytes)/(1<<20), r.Server.PeakThreads, s.Calls, s.SetupMeanMs, s.SetupMaxMs,
		100*s.EchoShare, s.RTTMeanMs, s.RTTMaxMs)
	if s.Listeners > 0 {
		fmt.Fprintf(b, "; %d callers decoded it: mean %.1f dBov, %.0f %% of the frames audible", s.Listeners, s.EchoDBov, 100*s.AudibleShare)
	}
	b.WriteString(".\n\n| calls | CPU % of a core | CPU s per call-minute | RSS MB | RSS/call kB | in / out Mbit/s | audio back % | loss % | late frames (> 20 ms) | generator CPU % | load avg |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n")
	for _, p := range steps {
		fmt.Fprintf(b, "| %d | %.1f | %.3f | %.1f | %.0f | %.2f / %.2f | %.1f | %.3f | %d of %d | %.0f | %.1f |\n",
			p.Participants, p.ServerCPUPct, p.CPUPerCallMinute, float64(p.ServerRSSBytes)/(1<<20), p.RSSPerParticipant/1024,
			p.NetInMbps, p.NetOutMbps, 100*p.EchoShare, 100*p.LossRatio, p.Audio.LateFrames, p.Audio.Frames, p.GenCPUPct, p.LoadAvg)
	}
	b.WriteString("\n")
}

// writeSIPComparison sets strata beside Janus at the largest number of calls both measured.
func writeSIPComparison(b *strings.Builder, per map[string][]sipStep) {
	s, j := per["strata"], per["janus"]
	var cs, cj *sipStep
	for i := range s {
		for k := range j {
			if s[i].Participants == j[k].Participants {
				cs, cj = &s[i], &j[k]
			}
		}
	}
	if cs == nil {
		b.WriteString("No number of calls was measured on both servers, so there is no comparison.\n\n")
		return
	}
	fmt.Fprintf(b, "At %d calls (strata/Janus below 1: strata uses less):\n\n| figure | strata | Janus | strata/Janus |\n|---|---:|---:|---:|\n", cs.Participants)
	rows := []struct {
		name   string
		format string
		s, j   float64
	}{
		{"CPU, % of a core", "%.1f", cs.ServerCPUPct, cj.ServerCPUPct},
		{"**CPU s per call-minute**", "%.3f", cs.CPUPerCallMinute, cj.CPUPerCallMinute},
		{"RSS, MB", "%.1f", float64(cs.ServerRSSBytes) / (1 << 20), float64(cj.ServerRSSBytes) / (1 << 20)},
		{"**RSS per call, kB**", "%.0f", cs.RSSPerParticipant / 1024, cj.RSSPerParticipant / 1024},
		{"traffic in + out, Mbit/s", "%.2f", cs.TrafficMbps, cj.TrafficMbps},
		{"audio back, %", "%.1f", 100 * cs.EchoShare, 100 * cj.EchoShare},
	}
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | "+r.format+" | "+r.format+" | %s |\n", r.name, r.s, r.j, ratio(r.s, r.j))
	}
	b.WriteString("\n")
}
