package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

func twoFlows(engine string, tput1, tput2, p95 float64) metrics.Summary {
	return metrics.Summary{Scenario: "x", Engine: engine,
		Links: []metrics.LinkSummary{{Name: "bn", Utilization: 0.5, ThroughputBps: 5e6}}, // 10 Mbit/s mean capacity
		Flows: []metrics.FlowSummary{
			{Name: "a", ThroughputBps: tput1, Bottleneck: "bn", QueueDelayMs: metrics.Delay{P95: p95}},
			{Name: "b", ThroughputBps: tput2, Bottleneck: "bn", QueueDelayMs: metrics.Delay{P95: 10}},
		}}
}

// A share difference over 10 % of the capacity and a p95 difference over
// 20 ms are flagged; smaller ones are not.
func TestCompareTableFlags(t *testing.T) {
	c := Comparison{Name: "x", A: twoFlows("sim", 5e6, 3e6, 10), B: twoFlows("emu", 3.9e6, 3.5e6, 35)}
	table, differ := CompareTable(c, "sim", "emu")
	if differ != 1 {
		t.Fatalf("%d flows differ, want 1:\n%s", differ, table)
	}
	lines := strings.Split(table, "\n")
	if !strings.Contains(lines[2], "**share, delay**") || !strings.Contains(lines[2], "50.0 %") || !strings.Contains(lines[2], "39.0 %") {
		t.Fatalf("flow a's row: %s", lines[2])
	}
	if strings.Contains(lines[3], "**") {
		t.Fatalf("flow b (5 %% and 0 ms apart) flagged: %s", lines[3])
	}
	if s := Share(metrics.Summary{Links: []metrics.LinkSummary{{Name: "bn"}}}, metrics.FlowSummary{Bottleneck: "bn"}); !math.IsNaN(s) {
		t.Fatalf("share over an idle link = %v, want NaN", s)
	}
}

// Runs are paired by their directory; a suite's combined summary (a list) is
// skipped, and runs on one side only are reported.
func TestLoadAndPair(t *testing.T) {
	write := func(dir, rel string, v any) {
		p := filepath.Join(dir, rel, "summary.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(v)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := t.TempDir(), t.TempDir()
	write(a, ".", []metrics.Summary{{}})
	write(a, "s/one", twoFlows("sim", 1, 1, 1))
	write(a, "s/two", twoFlows("sim", 1, 1, 1))
	write(b, "s/one", twoFlows("emu", 1, 1, 1))
	sa, err := LoadSummaries(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := LoadSummaries(b)
	if err != nil {
		t.Fatal(err)
	}
	pairs, missing := Pair(sa, sb)
	if len(pairs) != 1 || pairs[0].Name != "s/one" || len(missing) != 1 || missing[0] != "s/two" {
		t.Fatalf("pairs %v missing %v", pairs, missing)
	}
	doc := filepath.Join(t.TempDir(), "R.md")
	if err := os.WriteFile(doc, []byte("# R\n\n<!-- lab:compare/s/one -->\nold\n<!-- /lab:compare/s/one -->\nkept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UpdateComparisons(doc, pairs, "sim", "emu"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(doc)
	if strings.Contains(string(data), "old") || !strings.Contains(string(data), "| a |") || !strings.HasSuffix(string(data), "kept\n") {
		t.Fatalf("document after the refresh:\n%s", data)
	}
}

// Two single runs pair whatever their names (strata's GCC and Chromium's).
func TestPairSingleRuns(t *testing.T) {
	a := map[string]metrics.Summary{"rfc8867-5.1": twoFlows("emu", 1, 1, 1)}
	b := map[string]metrics.Summary{"rfc8867-chromium-5.1": twoFlows("emu", 1, 1, 1)}
	pairs, missing := Pair(a, b)
	if len(pairs) != 1 || pairs[0].Name != "rfc8867-5.1" || len(missing) != 0 {
		t.Fatalf("pairs %v missing %v", pairs, missing)
	}
}
