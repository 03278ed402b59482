package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-rtc/strata/internal/load/report"
)

// writeAudioScenario writes one of the audio scenarios with its plots and notes.
func writeAudioScenario(b *strings.Builder, c config, o *outcome) {
	if o.name == stressScenario {
		writeStress(b, c, o)
	} else {
		writeMCUvsSFU(b, c, o)
	}
	if err := writeAudioPlots(c, o); err != nil {
		o.notes = append(o.notes, "plots: "+err.Error())
	} else {
		fmt.Fprintf(b, "Plots (one point a step): `%[1]s/compare-cpu.svg`, `%[1]s/compare-memory.svg`, `%[1]s/compare-bandwidth.svg`.\n\n", o.name)
	}
	for _, n := range o.notes {
		fmt.Fprintf(b, "- note: %s\n", n)
	}
	b.WriteString("\n")
}

// writeStress tabulates every step of the stress test per server and reads the goals off
// the step at goalParticipants.
func writeStress(b *strings.Builder, c config, o *outcome) {
	per := map[string][]point{}
	for _, t := range c.targets {
		runs := o.runs[t]
		if len(runs) == 0 {
			fmt.Fprintf(b, "%s: no run completed.\n\n", t)
			continue
		}
		r := runs[0]
		per[t] = points(r)
		fmt.Fprintf(b, "**%s** (report in `%s/%s/%s/report.md`, idle RSS %.1f MB):\n\n", t, o.name, t, r.Plan.Name, float64(r.Server.BaselineRSSBytes)/(1<<20))
		b.WriteString("| participants | CPU % of a core | CPU %/participant | mixing CPU %/participant | RSS MB | RSS/participant kB | in / out Mbit/s | loss % | late frames (> 20 ms) | lateness p99 / max ms | inter-arrival p50 / p99 ms | generator CPU % | load avg |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---:|---:|\n")
		for _, p := range per[t] {
			fmt.Fprintf(b, "| %d | %.1f | %.3f | %.3f | %.1f | %.0f | %.2f / %.2f | %.3f | %d of %d | %.0f / %.0f | %.0f / %.0f | %.0f | %.1f |\n",
				p.Participants, p.ServerCPUPct, p.CPUPerParticipant(), p.MixerCPUPerParticipant(), float64(p.ServerRSSBytes)/(1<<20), p.RSSPerParticipant/1024,
				p.NetInMbps, p.NetOutMbps, 100*p.LossRatio, p.Audio.LateFrames, p.Audio.Frames, p.Audio.LatenessP99, p.Audio.LatenessMax,
				p.Audio.InterarrivalP50, p.Audio.InterarrivalP99, p.GenCPUPct, p.LoadAvg)
		}
		if r.StoppedBehind > 0 {
			last := r.Steps[len(r.Steps)-1]
			fmt.Fprintf(b, "\n%s fell behind real time at %d participants (%.2f %% of the frames late by more than 20 ms, %.2f %% lost): the run stopped there.\n",
				t, last.Participants, 100*last.Audio.LateShare, 100*last.LossRatio)
		}
		if l := r.Totals.Listening; l.Listeners > 0 {
			fmt.Fprintf(b, "\nThe %d decoding participants heard %.1f dBov on average while someone else talked (%.0f %% of those frames above %d dBov), %.1f dBov while nobody did.\n",
				l.Listeners, l.SpeechMeanDBov, 100*l.SpeechAudible, -40, l.SilenceDBov)
		}
		b.WriteString("\n")
	}
	g := stressGoals(per["strata"], per["janus"])
	if !g.reached {
		fmt.Fprintf(b, "The goals are read at %d participants, which not both servers reached.\n\n", goalParticipants)
		return
	}
	fmt.Fprintf(b, "Goals at %d participants:\n\n| goal | strata | Janus | strata/Janus | met |\n|---|---:|---:|---:|---|\n", goalParticipants)
	cpu, mix, mem := share(g.cpuStrata, g.cpuJanus), share(g.mixStrata, g.mixJanus), share(g.memStrata, g.memJanus)
	fmt.Fprintf(b, "| mixing CPU per participant ≤ ½ Janus's (%% of a core, the threads named mixer) | %.3f | %.3f | %.2f | %s |\n", g.mixStrata, g.mixJanus, mix, yes(mix <= 0.5))
	fmt.Fprintf(b, "| (whole process: CPU per participant, %% of a core) | %.3f | %.3f | %.2f | |\n", g.cpuStrata, g.cpuJanus, cpu)
	fmt.Fprintf(b, "| memory per participant ≤ 1.5× Janus's (kB) | %.0f | %.0f | %.2f | %s |\n", g.memStrata/1024, g.memJanus/1024, mem, yes(mem <= 1.5))
	fmt.Fprintf(b, "| no frame late by more than 20 ms | %d late, max %.0f ms | | | %s |\n\n", g.lateStrata, g.latenessMaxStrata, yes(g.lateStrata == 0))
}

// writeMCUvsSFU tabulates the conference done both ways per server and finds where the MCU starts
// costing less.
func writeMCUvsSFU(b *strings.Builder, c config, o *outcome) {
	for _, t := range c.targets {
		runs := o.runs[t]
		if len(runs) < 2 {
			fmt.Fprintf(b, "%s: the MCU and the SFU runs did not both complete.\n\n", t)
			continue
		}
		mcu, sfu := points(runs[0]), points(runs[1])
		fmt.Fprintf(b, "**%s** (reports in `%s/%s/`):\n\n", t, o.name, t)
		b.WriteString("| participants | CPU % MCU / SFU | RSS MB MCU / SFU | traffic Mbit/s MCU / SFU | late frames MCU / SFU | loss % MCU / SFU | load avg |\n|---:|---|---|---|---|---|---|\n")
		for _, m := range mcu {
			s, ok := at(sfu, m.Participants)
			if !ok {
				continue
			}
			fmt.Fprintf(b, "| %d | %.1f / %.1f | %.1f / %.1f | %.2f / %.2f | %d / %d | %.3f / %.3f | %.1f / %.1f |\n", m.Participants,
				m.ServerCPUPct, s.ServerCPUPct, float64(m.ServerRSSBytes)/(1<<20), float64(s.ServerRSSBytes)/(1<<20),
				m.TrafficMbps, s.TrafficMbps, m.Audio.LateFrames, s.Audio.LateFrames, 100*m.LossRatio, 100*s.LossRatio, m.LoadAvg, s.LoadAvg)
		}
		cross := func(y func(point) float64) string {
			if n := crossover(mcu, sfu, y); n > 0 {
				return fmt.Sprintf("from %d participants on", n)
			}
			return "never, up to the largest size"
		}
		fmt.Fprintf(b, "\n%s: the MCU uses less CPU %s, less memory %s, less traffic %s.\n\n", t,
			cross(func(p point) float64 { return p.ServerCPUPct }),
			cross(func(p point) float64 { return float64(p.ServerRSSBytes) }),
			cross(func(p point) float64 { return p.TrafficMbps }))
	}
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// writeAudioPlots draws the audio scenarios against participants, one point a step: seed 001's
// Fig. 5 and 6 for the stress test (CPU, memory, traffic in and out), Fig. 10 and 12 for the
// conference (MCU solid, SFU dashed).
func writeAudioPlots(c config, o *outcome) error {
	dir := filepath.Join(c.out, o.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	type fig struct {
		base, title, unit string
		y                 []func(point) float64
		names             []string
	}
	mb := func(p point) float64 { return float64(p.ServerRSSBytes) / (1 << 20) }
	cpu := func(p point) float64 { return p.ServerCPUPct }
	figs := []fig{
		{"compare-cpu", "server CPU", "CPU (% of one core)", []func(point) float64{cpu}, []string{""}},
		{"compare-memory", "server memory (RSS)", "MB", []func(point) float64{mb}, []string{""}},
		{"compare-bandwidth", "server traffic", "Mbit/s", []func(point) float64{
			func(p point) float64 { return p.NetInMbps }, func(p point) float64 { return p.NetOutMbps }}, []string{" in", " out"}},
	}
	if o.name == mcuScenario {
		figs[2] = fig{"compare-bandwidth", "server traffic (in + out)", "Mbit/s", []func(point) float64{func(p point) float64 { return p.TrafficMbps }}, []string{""}}
	}
	var errs []error
	for _, f := range figs {
		var lines []report.Line
		for _, t := range c.targets {
			for ri, r := range o.runs[t] {
				kind := ""
				if o.name == mcuScenario {
					kind = []string{" MCU", " SFU"}[min(ri, 1)]
				}
				for yi, y := range f.y {
					l := report.Line{Name: t + kind + f.names[yi], Color: targetColor(t), Dashed: ri == 1 || yi == 1}
					for _, p := range points(r) {
						if v := y(p); p.ServerOK && !math.IsNaN(v) {
							l.X, l.Y = append(l.X, float64(p.Participants)), append(l.Y, v)
						}
					}
					lines = append(lines, l)
				}
			}
		}
		errs = append(errs, report.PlotLines(filepath.Join(dir, f.base), o.name+": "+f.title, "participants", f.unit, lines))
	}
	return errors.Join(errs...)
}
