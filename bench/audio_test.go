package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	strataconfig "github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/rig"
)

func steps(cpu ...float64) []point {
	var out []point
	for i, c := range cpu {
		out = append(out, point{Step: report.Step{Participants: 2 * (i + 1), ServerOK: true, ServerCPUPct: c}})
	}
	return out
}

func TestCrossover(t *testing.T) {
	cpu := func(p point) float64 { return p.ServerCPUPct }
	// The SFU grows faster: the MCU is cheaper from 8 on (it was cheaper at 4 too, but not at 6).
	mcu, sfu := steps(5, 6, 9, 10, 11), steps(2, 7, 8, 12, 20)
	if n := crossover(mcu, sfu, cpu); n != 8 {
		t.Fatalf("crossover %d, want 8", n)
	}
	if n := crossover(steps(5, 6), steps(1, 2), cpu); n != 0 {
		t.Fatalf("an MCU that never wins crosses at %d", n)
	}
	// Sizes only one side measured do not count.
	if n := crossover(steps(1, 1, 1), steps(2), cpu); n != 2 {
		t.Fatalf("crossover over one common size: %d", n)
	}
}

// stressRun is a stepped run: 50 and 100 participants, with cpu % of a core and rss MB at each.
func stressRun(cpu, rss []float64, late uint64) *report.Result {
	return stressRunMixing(cpu, cpu, rss, late)
}

// stressRunMixing is stressRun with the mixing threads' CPU at each step.
func stressRunMixing(cpu, mixing, rss []float64, late uint64) *report.Result {
	r := &report.Result{Plan: plan.AudioBridgeStress("http://h/janus", 100, 50, 10e9)}
	r.Server.BaselineRSSBytes = 20 << 20
	for i := range cpu {
		st := report.Step{Participants: 50 * (i + 1), ServerOK: true, ServerCPUPct: cpu[i], MixerCPUPct: mixing[i],
			ServerRSSBytes: int64(rss[i] * (1 << 20))}
		st.Audio.LateFrames, st.Audio.Frames = late, 1000
		r.Steps = append(r.Steps, st)
	}
	return r
}

func TestStressReportReadsTheGoals(t *testing.T) {
	c := config{targets: []string{"strata", "janus"}, out: t.TempDir()}
	o := &outcome{name: stressScenario, runs: map[string][]*report.Result{
		// strata: 40 % of a core (10 % mixing) and 20 + 100 MB at 100 participants; Janus 100 %
		// (60 % mixing) and 20 + 50 MB.
		"strata": {stressRunMixing([]float64{20, 40}, []float64{5, 10}, []float64{70, 120}, 0)},
		"janus":  {stressRunMixing([]float64{50, 100}, []float64{30, 60}, []float64{45, 70}, 3)},
	}}
	o.runs["janus"][0].StoppedBehind = 2
	var b strings.Builder
	writeAudioScenario(&b, c, o)
	md := b.String()
	for _, want := range []string{
		"| 100 | 40.0 | 0.400 | 0.100 | 120.0 | 1024 |",
		"| mixing CPU per participant ≤ ½ Janus's (% of a core, the threads named mixer) | 0.100 | 0.600 | 0.17 | yes |",
		"| (whole process: CPU per participant, % of a core) | 0.400 | 1.000 | 0.40 | |",
		"| memory per participant ≤ 1.5× Janus's (kB) | 1024 | 512 | 2.00 | no |",
		"| no frame late by more than 20 ms | 0 late",
		"janus fell behind real time at 100 participants",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("stress report lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"compare-cpu.svg", "compare-memory.png", "compare-bandwidth.svg"} {
		if _, err := os.Stat(filepath.Join(c.out, stressScenario, f)); err != nil {
			t.Error(err)
		}
	}
	// Without 100 participants on both servers the goals are not read.
	o.runs["janus"][0].Steps = o.runs["janus"][0].Steps[:1]
	b.Reset()
	writeStress(&b, c, o)
	if !strings.Contains(b.String(), "which not both servers reached") {
		t.Error("goals read without both servers at 100")
	}
}

func TestMCUvsSFUReport(t *testing.T) {
	c := config{targets: []string{"strata"}, out: t.TempDir()}
	mcu, sfu := stressRun([]float64{5, 6}, []float64{30, 31}, 0), stressRun([]float64{4, 9}, []float64{30, 40}, 0)
	var b strings.Builder
	writeAudioScenario(&b, c, &outcome{name: mcuScenario, runs: map[string][]*report.Result{"strata": {mcu, sfu}}})
	for _, want := range []string{"| 100 | 6.0 / 9.0 | 31.0 / 40.0 |", "the MCU uses less CPU from 100 participants on, less memory from 100 participants on"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("MCU/SFU report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestAudioScenariosAndTargets(t *testing.T) {
	sc := audioScales["small"].merge(audioScale{StressMax: 60, ConfHold: 7e9})
	if sc.StressMax != 60 || sc.StressStep != 20 || sc.ConfHold != 7e9 || sc.Conference != 20 {
		t.Fatalf("merged scale %+v", sc)
	}
	scs := audioScenarios(sc, "http://h/janus")
	if len(scs) != 2 || scs[0].name != stressScenario || scs[1].name != mcuScenario || len(scs[1].plans) != 2 {
		t.Fatalf("scenarios %+v", scs)
	}
	for _, s := range scs {
		for _, p := range s.plans {
			if err := p.Validate(); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
	}
	c := config{Binaries: rig.Binaries{Strata: "bin/strata", Janus: "/usr/bin/janus", JanusLib: t.TempDir()}}
	dir := t.TempDir()
	if _, err := target(c, "janus", scs[0].plans[0], "").Write(dir, "10.0.0.2", "veth9", 8088); err != nil {
		t.Fatal(err)
	}
	jcfg, err := os.ReadFile(filepath.Join(dir, "janus.plugin.audiobridge.jcfg"))
	if err != nil || !strings.Contains(string(jcfg), "room-1234: {") || !strings.Contains(string(jcfg), "sampling_rate = 16000") ||
		strings.Contains(string(jcfg), "secret") {
		t.Fatalf("Janus's audio bridge configuration: %v\n%s", err, jcfg)
	}
	if _, err := os.Stat(filepath.Join(dir, "janus.plugin.videoroom.jcfg")); err == nil {
		t.Error("the audio bridge run configures the videoroom")
	}
	if tg := target(c, "janus", scs[1].plans[1], ""); tg.Name != "janus" {
		t.Fatal(tg.Name)
	}
	// strata takes the generator's 200 participants from one address, and keeps its audio bridge
	// with the sample room.
	sdir := t.TempDir()
	argv, err := target(c, "strata", scs[0].plans[0], "").Write(sdir, "10.0.0.2", "veth9", 8088)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := strataconfig.Load(argv[len(argv)-1])
	if err != nil {
		t.Fatal(err)
	}
	ab := cfg.Plugins.AudioBridge
	if cfg.General.Limits.SessionsPerAddress != 0 || cfg.General.LogLevel != "warn" || !ab.Enabled || len(ab.Rooms) != 1 ||
		ab.Rooms[0].ID != plan.AudioBridgeRoom || ab.Rooms[0].SamplingRate != 16000 {
		t.Fatalf("strata's configuration: limits %+v, audio bridge %+v", cfg.General.Limits, ab)
	}
}
