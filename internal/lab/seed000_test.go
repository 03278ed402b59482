package lab

import (
	"path/filepath"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// seed000Cell runs one seed 000 scenario file for every policy of its sweep at half its duration
// and returns, per policy, the PER over all layers of all sessions and the total goodput.
func seed000Cell(t *testing.T, file string) (per, goodput map[string]float64) {
	t.Helper()
	f, err := scenario.ParseFile(filepath.Join("..", "..", "scenarios", "seed000", file))
	if err != nil {
		t.Fatal(err)
	}
	per, goodput = map[string]float64{}, map[string]float64{}
	for _, s := range f.Runs {
		s.ScaleTime(0.5)
		sm, err := s.Build(s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := sm.Run(); err != nil {
			t.Fatal(err)
		}
		sum := metrics.Summarize(metrics.RecordingOf(sm), metrics.Meta{Scenario: s.Name})
		if sum.Policy != s.SweepValue {
			t.Fatalf("%s: summary names policy %q, the run was %q", file, sum.Policy, s.SweepValue)
		}
		var sent, lost int64
		for _, ss := range sum.Sessions {
			for _, l := range ss.Layers {
				sent, lost = sent+l.Sent, lost+l.Lost
				goodput[sum.Policy] += l.GoodputBps
			}
		}
		if sent == 0 {
			t.Fatalf("%s %s: nothing sent towards the receiver", file, sum.Policy)
		}
		per[sum.Policy] = float64(lost) / float64(sent)
	}
	return per, goodput
}

// TestSeed000Directions checks the direction of seed 000's result in its overloaded cells: the
// network policy loses fewer packets than trial-and-error switching (probe) without winning by
// sending less; in experiment 3 (TCP present) thanks to the media reservation.
func TestSeed000Directions(t *testing.T) {
	for _, file := range []string{"exp1/s1-l3.yaml", "exp2/s5-l3.yaml", "exp3/s5-l3.yaml"} {
		per, good := seed000Cell(t, file)
		t.Logf("%s: PER probe %.2f%% network %.2f%% bwe %.2f%% hybrid %.2f%%; goodput (Mbit/s) probe %.2f network %.2f",
			file, 100*per["probe"], 100*per["network"], 100*per["bwe"], 100*per["hybrid"], good["probe"]/1e6, good["network"]/1e6)
		if per["probe"] <= 0 || per["network"] >= per["probe"] {
			t.Errorf("%s: network PER %.4f not below probe's %.4f", file, per["network"], per["probe"])
		}
		if good["network"] < 0.8*good["probe"] {
			t.Errorf("%s: network goodput %.0f below 80%% of probe's %.0f", file, good["network"], good["probe"])
		}
	}
}
