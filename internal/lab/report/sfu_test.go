package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

func sfuRun(pol string, sessions, layers int, sent, lost int64) *Run {
	s := metrics.Summary{Scenario: "x", Policy: pol, SweepParam: "sfu.policy", SweepValue: pol}
	for i := 0; i < sessions; i++ {
		ss := metrics.SessionSummary{Name: "s"}
		for l := 1; l <= layers; l++ {
			per := float64(lost) / float64(sent)
			ss.Layers = append(ss.Layers, metrics.LayerSummary{Layer: l, Sent: sent, Lost: lost, PER: &per, GoodputBps: 1e6})
		}
		s.Sessions = append(s.Sessions, ss)
	}
	return &Run{Summary: s}
}

func TestSFUTableLayout(t *testing.T) {
	runs := []*Run{sfuRun("network", 2, 3, 1000, 10), sfuRun("probe", 2, 3, 1000, 100), sfuRun("probe", 1, 1, 1000, 0)}
	got := SFUTable(runs)
	// probe first (the paper's original), rows by sessions, columns by layers, PER (goodput).
	if strings.Index(got, "**probe**") > strings.Index(got, "**network**") {
		t.Fatalf("policy order:\n%s", got)
	}
	for _, want := range []string{"| 1 | 0.0% (1.00) |  |  |", "| 2 |  |  | 10.0% (6.00) |", "| 2 |  |  | 1.0% (6.00) |"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if lt := LayerTable(runs[1].Summary); !strings.Contains(lt, "Layer policy **probe**") || !strings.Contains(lt, "| s | 3 | 1000 | 100 | 10.00% | 1.000 | 0 |") {
		t.Errorf("layer table:\n%s", lt)
	}
}

func TestUpdateResultsGroupsSFUEntries(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "R.md")
	sweep := func(name string, runs ...*Run) Entry {
		return Entry{Name: name, Sweep: &Sweep{Scenario: name, Param: "sfu.policy", Runs: runs}}
	}
	entries := []Entry{
		sweep("seed000/exp2/s1-l3", sfuRun("probe", 1, 3, 100, 5), sfuRun("network", 1, 3, 100, 0)),
		sweep("seed000/exp2/s2-l3", sfuRun("probe", 2, 3, 100, 7), sfuRun("network", 2, 3, 100, 1)),
	}
	if err := UpdateResults(doc, entries); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(doc)
	s := string(data)
	if strings.Count(s, "<!-- lab:") != 1 || !strings.Contains(s, "<!-- lab:seed000/exp2 -->") {
		t.Fatalf("want one block for the directory:\n%s", s)
	}
	if !strings.Contains(s, "| 2 |  |  | 7.0% (6.00) |") || !strings.Contains(s, "| 1 |  |  | 0.0% (3.00) |") {
		t.Fatalf("cells missing:\n%s", s)
	}
}
