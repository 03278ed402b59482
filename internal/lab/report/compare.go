package report

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

// The differences between two engines' results that a comparison flags.
const (
	// ShareTolerance is the largest difference in throughput share (of the
	// bottleneck's capacity) that counts as agreement: 10 %.
	ShareTolerance = 0.10
	// DelayToleranceMs is the largest difference in p95 queuing delay that
	// counts as agreement.
	DelayToleranceMs = 20.0
)

// Comparison is one scenario run by two engines (or two versions).
type Comparison struct {
	// Name is the run's directory relative to the result directories
	// ("seed004/nada-vs-cubic", a sweep's "seed004/buffer-sweep/20ms").
	Name string
	A, B metrics.Summary
}

// LoadSummaries reads every run's summary.json under dir, keyed by its
// directory relative to dir (by the scenario's name for dir itself, the
// output of a single file's run). A suite's combined
// summary.json (a list of the runs' summaries) is left out.
func LoadSummaries(dir string) (map[string]metrics.Summary, error) {
	out := map[string]metrics.Summary{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "summary.json" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if trimmed := strings.TrimSpace(string(data)); strings.HasPrefix(trimmed, "[") {
			return nil
		}
		var s metrics.Summary
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		if rel == "." {
			rel = s.Scenario
		}
		out[filepath.ToSlash(rel)] = s
		return nil
	})
	return out, err
}

// Pair matches the runs of two result directories by name; runs found in
// only one are listed in missing. Two single runs pair whatever their names
// (two scenario files run alone, say strata's GCC and Chromium's on the same
// network), under the first one's name.
func Pair(a, b map[string]metrics.Summary) (pairs []Comparison, missing []string) {
	if len(a) == 1 && len(b) == 1 {
		for name, sa := range a {
			for _, sb := range b {
				return []Comparison{{Name: name, A: sa, B: sb}}, nil
			}
		}
	}
	for name, sa := range a {
		if sb, ok := b[name]; ok {
			pairs = append(pairs, Comparison{Name: name, A: sa, B: sb})
		} else {
			missing = append(missing, name)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].Name < pairs[j].Name })
	sort.Strings(missing)
	return pairs, missing
}

// Share is a flow's throughput over the mean capacity of its bottleneck
// link (the run's bottleneck when the flow has none); NaN when that
// capacity is unknown (the link carried nothing).
func Share(s metrics.Summary, f metrics.FlowSummary) float64 {
	name := f.Bottleneck
	if name == "" {
		name = s.Bottleneck
	}
	for _, l := range s.Links {
		if l.Name == name && l.Utilization > 0 {
			return f.ThroughputBps / (l.ThroughputBps / l.Utilization)
		}
	}
	return math.NaN()
}

// CompareTable renders a comparison as a markdown table: per flow the
// throughput share and the p95 queuing delay of both runs side by side,
// flagging differences beyond ShareTolerance and DelayToleranceMs. It also
// returns how many flows differ.
func CompareTable(c Comparison, labelA, labelB string) (string, int) {
	var b strings.Builder
	fmt.Fprintf(&b, "| flow | share %s | share %s | Δ share | p95 queue %s (ms) | p95 queue %s (ms) | Δ p95 (ms) | differs |\n",
		labelA, labelB, labelA, labelB)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|\n")
	byName := map[string]metrics.FlowSummary{}
	for _, f := range c.B.Flows {
		byName[f.Name] = f
	}
	differ := 0
	for _, fa := range c.A.Flows {
		fb, ok := byName[fa.Name]
		if !ok {
			fmt.Fprintf(&b, "| %s | %s | – | | %.1f | – | | only in %s |\n", fa.Name, pct(Share(c.A, fa)), fa.QueueDelayMs.P95, labelA)
			differ++
			continue
		}
		sa, sb := Share(c.A, fa), Share(c.B, fb)
		da, db := fa.QueueDelayMs.P95, fb.QueueDelayMs.P95
		var flags []string
		if math.Abs(sb-sa) > ShareTolerance {
			flags = append(flags, "share")
		}
		if math.Abs(db-da) > DelayToleranceMs {
			flags = append(flags, "delay")
		}
		if len(flags) > 0 {
			differ++
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %.1f | %+.1f | %s |\n", fa.Name, pct(sa), pct(sb), signedPct(sb-sa),
			da, db, db-da, bold(strings.Join(flags, ", ")))
	}
	return b.String(), differ
}

// CompareReport renders every comparison with a heading, and the runs that
// only one side has.
func CompareReport(pairs []Comparison, missing []string, labelA, labelB string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s versus %s\n\n", labelA, labelB)
	fmt.Fprintf(&b, "Share is a flow's throughput over its bottleneck's mean capacity; flagged: differences over %.0f %% of the capacity or %.0f ms of p95 queuing delay.\n\n",
		100*ShareTolerance, DelayToleranceMs)
	for _, c := range pairs {
		table, differ := CompareTable(c, labelA, labelB)
		fmt.Fprintf(&b, "## %s\n\n%s\n%d of %d flows differ.\n\n", c.Name, table, differ, len(c.A.Flows))
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Only on one side: %s.\n", strings.Join(missing, ", "))
	}
	return b.String()
}

// UpdateComparisons refreshes the comparison tables of a results document:
// each between "<!-- lab:compare/NAME -->" and "<!-- /lab:compare/NAME -->".
func UpdateComparisons(path string, pairs []Comparison, labelA, labelB string) error {
	return updateDoc(path, func(doc string) string {
		for _, c := range pairs {
			table, differ := CompareTable(c, labelA, labelB)
			doc = replaceBlock(doc, "compare/"+c.Name, fmt.Sprintf("%s\n%d of %d flows differ (over %.0f %% share or %.0f ms p95).\n",
				table, differ, len(c.A.Flows), 100*ShareTolerance, DelayToleranceMs))
		}
		return doc
	})
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

func signedPct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%+.1f %%", 100*x)
}

func bold(s string) string {
	if s == "" {
		return ""
	}
	return "**" + s + "**"
}
