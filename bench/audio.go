package main

import (
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
)

// Seed 001's audio bridge experiments (§3.2, §3.5, Fig. 5–6 and 10–12), strata and Janus in one
// invocation:
//
//   - audiobridge-stress: participants join one wideband room in steps until StressMax, or until
//     the server falls behind real time (a step with more than 5 % of the mixes' frames late by
//     more than 20 ms, or more than 1 % lost); CPU, memory and traffic against participants.
//   - mcu-vs-sfu: the same talking participants in the audio bridge (MCU) and as audio-only
//     videoroom publishers who each receive all the others (SFU), in steps up to Conference;
//     where the MCU starts costing less than the SFU.
const (
	stressScenario = "audiobridge-stress"
	mcuScenario    = "mcu-vs-sfu"
)

// goalParticipants is where the goals are read off the stress test.
const goalParticipants = 100

// audioScale sizes the two audio scenarios.
type audioScale struct {
	StressMax, StressStep int
	StressHold            time.Duration
	Conference, ConfStep  int
	ConfHold              time.Duration
}

var audioScales = map[string]audioScale{
	"small": {StressMax: 200, StressStep: 20, StressHold: 10 * time.Second, Conference: 20, ConfStep: 2, ConfHold: 8 * time.Second},
	"full":  {StressMax: 200, StressStep: 10, StressHold: 15 * time.Second, Conference: 20, ConfStep: 2, ConfHold: 12 * time.Second},
}

// addAudioFlags registers the audio scenarios' flags; zero values keep the scale's.
func addAudioFlags(fs *flag.FlagSet, a *audioScale) {
	fs.IntVar(&a.StressMax, "stress-max", 0, "audiobridge-stress: most participants (default: the scale's)")
	fs.IntVar(&a.StressStep, "stress-step", 0, "audiobridge-stress: participants joining per step")
	fs.DurationVar(&a.StressHold, "stress-hold", 0, "audiobridge-stress: hold after each step")
	fs.IntVar(&a.Conference, "conference", 0, "mcu-vs-sfu: participants at the last step")
	fs.IntVar(&a.ConfStep, "conference-step", 0, "mcu-vs-sfu: participants joining per step")
	fs.DurationVar(&a.ConfHold, "conference-hold", 0, "mcu-vs-sfu: hold after each step")
}

// merge returns the scale with the flags that were given.
func (a audioScale) merge(flags audioScale) audioScale {
	set := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	setD := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	set(&a.StressMax, flags.StressMax)
	set(&a.StressStep, flags.StressStep)
	setD(&a.StressHold, flags.StressHold)
	set(&a.Conference, flags.Conference)
	set(&a.ConfStep, flags.ConfStep)
	setD(&a.ConfHold, flags.ConfHold)
	return a
}

func audioScenarios(a audioScale, server string) []scenario {
	return []scenario{
		{name: stressScenario, title: fmt.Sprintf("Audio bridge stress test: participants join one wideband room, %d at a time, up to %d", a.StressStep, a.StressMax),
			plans: []plan.Plan{plan.AudioBridgeStress(server, a.StressMax, a.StressStep, a.StressHold)}},
		{name: mcuScenario, title: fmt.Sprintf("Audio conference up to %d participants: audio bridge (MCU) against audio-only videoroom (SFU)", a.Conference),
			plans: []plan.Plan{plan.AudioBridgeConference(server, a.Conference, a.ConfStep, a.ConfHold), plan.VoiceConference(server, a.Conference, a.ConfStep, a.ConfHold)}},
	}
}

// point is one step of a stepped run with the figures the audio scenarios compare.
type point struct {
	report.Step
	// RSSGrowth is the step's RSS above the idle server's, per participant.
	RSSPerParticipant float64
	// TrafficMbps is everything through the server's interfaces, both ways.
	TrafficMbps float64
}

// points are a stepped run's steps.
func points(r *report.Result) []point {
	var out []point
	for _, s := range r.Steps {
		p := point{Step: s, TrafficMbps: s.NetInMbps + s.NetOutMbps}
		if s.Participants > 0 && s.ServerOK && r.Server.BaselineRSSBytes > 0 {
			p.RSSPerParticipant = float64(s.ServerRSSBytes-r.Server.BaselineRSSBytes) / float64(s.Participants)
		}
		out = append(out, p)
	}
	return out
}

// at returns the step with exactly n participants.
func at(ps []point, n int) (point, bool) {
	for _, p := range ps {
		if p.Participants == n {
			return p, true
		}
	}
	return point{}, false
}

// crossover is the smallest participant count from which the MCU costs less than the SFU at every
// larger count measured (by the figure y), or 0 if the MCU never stays below.
func crossover(mcu, sfu []point, y func(point) float64) int {
	from := 0
	for _, m := range mcu {
		s, ok := at(sfu, m.Participants)
		if !ok {
			continue
		}
		switch {
		case y(m) < y(s) && from == 0:
			from = m.Participants
		case y(m) >= y(s):
			from = 0
		}
	}
	return from
}

// goals are the goals read off the stress test at goalParticipants.
type goals struct {
	reached                    bool
	cpuStrata, cpuJanus        float64 // % of a core per participant
	mixStrata, mixJanus        float64 // the mixing threads' % of a core per participant
	memStrata, memJanus        float64 // bytes per participant
	lateStrata                 uint64
	latenessMaxStrata, lossPct float64
}

func stressGoals(strata, janus []point) goals {
	s, okS := at(strata, goalParticipants)
	j, okJ := at(janus, goalParticipants)
	if !okS || !okJ {
		return goals{}
	}
	return goals{reached: true, cpuStrata: s.CPUPerParticipant(), cpuJanus: j.CPUPerParticipant(),
		mixStrata: s.MixerCPUPerParticipant(), mixJanus: j.MixerCPUPerParticipant(),
		memStrata: s.RSSPerParticipant, memJanus: j.RSSPerParticipant, lateStrata: s.Audio.LateFrames,
		latenessMaxStrata: s.Audio.LatenessMax, lossPct: 100 * s.LossRatio}
}

// share is a/b, NaN when b is 0.
func share(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
