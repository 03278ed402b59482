package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

func TestNumFormatting(t *testing.T) {
	for in, want := range map[float64]string{1.5: "1.5", 1e6: "1000000", 0.1234567: "0.123457", math.NaN(): ""} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
	if SafeName("a/b c:d") != "a_b_c_d" {
		t.Error(SafeName("a/b c:d"))
	}
	if leadingNumber("150kbps") != 150 || !math.IsNaN(leadingNumber("gcc")) {
		t.Error("leadingNumber")
	}
}

func TestUpdateResultsAppendsNewEntries(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "R.md")
	e := Entry{Name: "x/y", Run: &Run{Summary: metrics.Summary{Scenario: "y", Engine: "sim",
		Flows: []metrics.FlowSummary{{Name: "f", Kind: "tcp", CC: "cubic", ThroughputBps: 1e6, FairShareBps: 2e6, FairShareRatio: 0.5}}}}}
	if err := UpdateResults(doc, []Entry{e}); err != nil {
		t.Fatal(err)
	}
	if err := UpdateResults(doc, []Entry{e}); err != nil { // refreshing replaces, not duplicates
		t.Fatal(err)
	}
	data, _ := os.ReadFile(doc)
	s := string(data)
	if strings.Count(s, "<!-- lab:x/y -->") != 1 || !strings.Contains(s, "| f | tcp | cubic | 1.000 | 2.000 | 0.500 |") {
		t.Fatalf("document:\n%s", s)
	}
}
