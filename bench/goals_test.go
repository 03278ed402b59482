package main

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
)

// fanRun is a clean fan-out step with the given figures.
func fanRun(n int, sPerGbit, rssPC float64, peak int64, genShare float64) *report.Result {
	r := &report.Result{Plan: plan.FanOut("x", n)}
	r.Totals = report.Totals{Publishers: 1, Subscribers: n, CompleteShare: 1, CPUSecondsPerGbit: sPerGbit, RSSPerPCBytes: rssPC,
		GeneratorPerGbitShare: genShare, GeneratorCPUPerServer: 2 * genShare}
	r.Server.PeakRSSBytes = peak
	return r
}

// TestGoalsReadTheWorstComparableStep checks the verdict takes, per scenario, the step with the
// highest strata/Janus ratio among those both servers carried cleanly, and the 64-way figure.
func TestGoalsReadTheWorstComparableStep(t *testing.T) {
	unclean := fanRun(4, 100, 1, 1, 0.1)
	unclean.Totals.Freezes = 3
	o := &outcome{name: "fanout", runs: map[string][]*report.Result{
		"strata": {fanRun(1, 10, 500, 50, 0.2), unclean, fanRun(64, 0.9, 400, 80, 0.3)},
		"janus":  {fanRun(1, 25, 600, 40, 0.1), fanRun(4, 20, 600, 40, 0.1), fanRun(64, 2, 700, 90, 0.1)},
	}}
	c := config{targets: []string{"strata", "janus"}}
	got := map[string]goal{}
	for _, g := range verdict(c, []*outcome{o}) {
		got[g.name] = g
	}
	check := func(name, where string, value float64, met bool) {
		t.Helper()
		g, ok := got[name]
		if !ok {
			t.Fatalf("no goal %q in %v", name, got)
		}
		if g.where != where || g.value < value-1e-9 || g.value > value+1e-9 || g.met() != met {
			t.Errorf("%s: %+v (met %v), want %s %.3f met %v", name, g, g.met(), where, value, met)
		}
	}
	check("CPU per forwarded gigabit, strata/Janus", "fanout-64", 0.45, true) // 10/25 = 0.4 at N = 1; N = 4 is not clean
	check("memory per PeerConnection, strata/Janus", "fanout-1", 500.0/600, true)
	check("peak RSS, strata/Janus", "fanout-1", 50.0/40, false)
	check("strata CPU per forwarded gigabit at N = 64 (s/Gbit)", "N = 64", 0.9, true)
	check("generator / server CPU per forwarded gigabit (strata)", "fanout-64", 0.3, false)

	var b strings.Builder
	writeGoals(&b, verdict(c, []*outcome{o}))
	if !strings.Contains(b.String(), "| peak RSS, strata/Janus | fanout | fanout-1 | 1.25 | 1 | no |") {
		t.Errorf("verdict table:\n%s", b.String())
	}
}

// TestGoalsJudgeTheFullRoom checks seed 001's full-size videoroom counts only when it ran at its
// own size, and fails when not clean.
func TestGoalsJudgeTheFullRoom(t *testing.T) {
	small := fanRun(1, 1, 1, 1, 0.1)
	small.Totals.Publishers, small.Totals.Subscribers = 6, 30
	full := fanRun(1, 1, 1, 1, 0.1)
	full.Totals.Publishers, full.Totals.Subscribers, full.Totals.MeanLossRatio = 10, 140, 0.01
	c := config{targets: []string{"strata"}}
	if gs := fullRoom(c, &outcome{name: "videoroom", runs: map[string][]*report.Result{"strata": {small}}}); len(gs) != 0 {
		t.Errorf("the small room was judged: %+v", gs)
	}
	gs := fullRoom(c, &outcome{name: "videoroom", runs: map[string][]*report.Result{"strata": {full}}})
	if len(gs) != 1 || gs[0].met() || gs[0].where != "10 + 140" {
		t.Errorf("a lossy full room: %+v", gs)
	}
}
