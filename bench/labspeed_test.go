package main

import (
	"strings"
	"testing"
)

func TestLabSpeedReport(t *testing.T) {
	r := &labSpeed{
		strata: []processRun{{wall: 0.060, cpu: 0.070}, {wall: 0.050, cpu: 0.060}, {wall: 0.090, cpu: 0.080}},
		ns3:    []processRun{{wall: 3.0, cpu: 3.0}, {wall: 3.2, cpu: 3.1}, {wall: 3.6, cpu: 3.3}},
	}
	if med, lo, hi := spread(r.strata, func(p processRun) float64 { return p.wall }); med != 0.060 || lo != 0.050 || hi != 0.090 {
		t.Errorf("spread = %v %v %v", med, lo, hi)
	}
	if med, _, _ := spread([]processRun{{wall: 1}, {wall: 2}}, func(p processRun) float64 { return p.wall }); med != 1.5 {
		t.Errorf("median of two = %v", med)
	}
	var b strings.Builder
	writeLabSpeed(&b, config{labSpeedRuns: 3}, r)
	for _, want := range []string{"| wall clock (ms) | 60.0 (50.0–90.0) | 3200.0 (3000.0–3600.0) | 53.3× |",
		"| CPU, user + system (ms) | 70.0 (60.0–80.0) | 3100.0 (3000.0–3300.0) | 44.3× |", "per pair: median 50.0× (40.0–64.0×)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	if g := r.goal(); !g.met() || g.bound != 0.02 {
		t.Errorf("goal %+v: 60 ms against 3.2 s meets 50×", g)
	}
	r.ns3 = nil
	r.ns3Missing = "ns-3 3.37 is not installed"
	b.Reset()
	writeLabSpeed(&b, config{}, r)
	if !strings.Contains(b.String(), "ns-3 did not run: ns-3 3.37 is not installed") {
		t.Errorf("without ns-3:\n%s", b.String())
	}
}
