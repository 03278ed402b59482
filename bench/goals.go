package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/strata-rtc/strata/internal/load/report"
)

// The performance goals every `make bench` is judged against (docs/PERFORMANCE.md): strata's CPU
// per forwarded gigabit at most half of Janus's wherever both run the same load, at most 1 s/Gbit
// on the 64-way fan-out, memory per PeerConnection and peak RSS no more than Janus's, seed 001's
// full videoroom clean on both servers, and a generator that costs under a quarter of the server.
const (
	goalCPURatio       = 0.5
	goalFanOut64SGbit  = 1.0
	goalMemoryRatio    = 1.0
	goalGeneratorShare = 0.25
	fullRoomPublishers = 10
	fullRoomSubs       = 140
)

// cell is one load both servers carried: a fan-out step, a whole run, or a step of a stepped run
// (the same participants on both). Figures are strata's and Janus's.
type cell struct {
	where          string
	cpu, mem, peak [2]float64
}

// goal is one line of the verdict: the worst cell of a scenario against a bound.
type goal struct {
	name, scenario, where string
	value, bound          float64
	format                string
	// higher: the goal is a floor (value at least bound), not a ceiling.
	higher bool
}

func (g goal) met() bool {
	if g.higher {
		return g.value >= g.bound
	}
	return g.value <= g.bound
}

// verdict reads the goals off the run's outcomes; scenarios that ran on one server only give
// none of the comparative goals.
func verdict(c config, outcomes []*outcome) []goal {
	var out []goal
	for _, o := range outcomes {
		cells := comparableCells(o)
		if len(cells) > 0 {
			out = append(out,
				worst("CPU per forwarded gigabit, strata/Janus", o.name, cells, func(c cell) [2]float64 { return c.cpu }, goalCPURatio),
				worst("memory per PeerConnection, strata/Janus", o.name, cells, func(c cell) [2]float64 { return c.mem }, goalMemoryRatio),
				worst("peak RSS, strata/Janus", o.name, cells, func(c cell) [2]float64 { return c.peak }, goalMemoryRatio))
		}
		for _, t := range c.targets {
			if g, ok := generatorShare(o, t); ok {
				out = append(out, g)
			}
		}
		if o.name == "fanout" {
			for _, r := range o.runs["strata"] {
				if r.Plan.Receivers() == 64 {
					out = append(out, goal{name: "strata CPU per forwarded gigabit at N = 64 (s/Gbit)", scenario: o.name, where: "N = 64",
						value: r.Totals.CPUSecondsPerGbit, bound: goalFanOut64SGbit, format: "%.2f"})
				}
			}
		}
		if o.name == "videoroom" {
			out = append(out, fullRoom(c, o)...)
		}
		if o.name == clusterScenario {
			out = append(out, clusterGoals(c, o)...)
		}
		if o.name == labSpeedScenario && o.lab != nil && len(o.lab.ns3) > 0 {
			out = append(out, o.lab.goal())
		}
	}
	return out
}

// comparableCells are the loads of a scenario that both servers carried cleanly.
func comparableCells(o *outcome) []cell {
	s, j := o.runs["strata"], o.runs["janus"]
	var out []cell
	for i := 0; i < min(len(s), len(j)); i++ {
		if len(s[i].Steps) > 0 || len(j[i].Steps) > 0 {
			out = append(out, stepCells(s[i], j[i])...)
			continue
		}
		if !clean(s[i]) || !clean(j[i]) {
			continue
		}
		out = append(out, cell{
			where: s[i].Plan.Name,
			cpu:   [2]float64{s[i].Totals.CPUSecondsPerGbit, j[i].Totals.CPUSecondsPerGbit},
			mem:   [2]float64{s[i].Totals.RSSPerPCBytes, j[i].Totals.RSSPerPCBytes},
			peak:  [2]float64{float64(s[i].Server.PeakRSSBytes), float64(j[i].Server.PeakRSSBytes)},
		})
	}
	return out
}

// stepCells pairs the steps of two stepped runs (audio bridge, SIP) with the same participants:
// at equal load, CPU per participant compares as CPU per forwarded gigabit does.
func stepCells(s, j *report.Result) []cell {
	jp := points(j)
	var out []cell
	for _, p := range points(s) {
		q, ok := at(jp, p.Participants)
		if !ok || p.Participants == 0 || !p.ServerOK || !q.ServerOK {
			continue
		}
		out = append(out, cell{
			where: fmt.Sprintf("%s, %d participants", s.Plan.Name, p.Participants),
			cpu:   [2]float64{p.ServerCPUPct, q.ServerCPUPct},
			mem:   [2]float64{p.RSSPerParticipant, q.RSSPerParticipant},
			peak:  [2]float64{float64(p.ServerRSSBytes), float64(q.ServerRSSBytes)},
		})
	}
	return out
}

// worst is the cell with the highest strata/Janus ratio of a figure.
func worst(name, scenario string, cells []cell, fig func(cell) [2]float64, bound float64) goal {
	g := goal{name: name, scenario: scenario, value: math.Inf(-1), bound: bound, format: "%.2f"}
	for _, c := range cells {
		f := fig(c)
		if f[1] <= 0 {
			continue
		}
		if r := f[0] / f[1]; r > g.value {
			g.value, g.where = r, c.where
		}
	}
	if math.IsInf(g.value, -1) {
		g.value = math.NaN()
	}
	return g
}

// generatorShare is the generator's CPU per forwarded gigabit in the steady window over the
// server's, at the worst run of a target (the whole run's CPU ratio for stepped runs, which have
// no steady window).
func generatorShare(o *outcome, t string) (goal, bool) {
	g := goal{name: "generator / server CPU per forwarded gigabit (" + t + ")", scenario: o.name, value: math.Inf(-1), bound: goalGeneratorShare, format: "%.2f"}
	for _, r := range o.runs[t] {
		v := r.Totals.GeneratorPerGbitShare
		if v == 0 {
			v = r.Totals.GeneratorCPUPerServer
		}
		if v > g.value && !math.IsInf(v, 0) {
			g.value, g.where = v, r.Plan.Name
		}
	}
	return g, !math.IsInf(g.value, -1)
}

// fullRoom says whether seed 001's videoroom at its own size ran clean on each server.
func fullRoom(c config, o *outcome) []goal {
	var out []goal
	for _, t := range c.targets {
		for _, r := range o.runs[t] {
			if r.Totals.Publishers < fullRoomPublishers || r.Totals.Subscribers < fullRoomSubs {
				continue
			}
			failed := 0.0
			if !clean(r) {
				failed = 1
			}
			out = append(out, goal{name: fmt.Sprintf("seed 001's full videoroom not clean (%s; 1 = loss, freezes or incomplete)", t),
				scenario: o.name, where: fmt.Sprintf("%d + %d", r.Totals.Publishers, r.Totals.Subscribers), value: failed, bound: 0, format: "%.0f"})
		}
	}
	return out
}

// writeGoals tabulates the verdict.
func writeGoals(b *strings.Builder, gs []goal) {
	if len(gs) == 0 {
		return
	}
	b.WriteString("## Goals\n\n| goal | scenario | worst at | measured | bound | met |\n|---|---|---|---:|---:|---|\n")
	for _, g := range gs {
		met := "no"
		if g.met() {
			met = "yes"
		}
		if math.IsNaN(g.value) {
			met = "no data"
		}
		bound := fmt.Sprintf("%.4g", g.bound)
		if g.higher {
			bound = "≥ " + bound
		}
		fmt.Fprintf(b, "| %s | %s | %s | "+g.format+" | %s | %s |\n", g.name, g.scenario, g.where, g.value, bound, met)
	}
	b.WriteString("\n")
}
