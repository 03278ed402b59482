package report

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

// Sweep is a finished sweep: one run per swept value, in file order.
type Sweep struct {
	Scenario, Param, Metric string
	Description, Reference  string
	Runs                    []*Run
}

// WriteSweep writes a sweep's table, CSV, JSON and metric plot into dir;
// each run's own files are expected in dir/SafeName(value) (see WriteRun).
func WriteSweep(dir string, sw *Sweep) error {
	summaries := make([]metrics.Summary, len(sw.Runs))
	for i, r := range sw.Runs {
		summaries[i] = r.Summary
	}
	if err := writeJSON(filepath.Join(dir, "sweep.json"), summaries); err != nil {
		return err
	}
	names, points := sweepPoints(sw)
	if err := writeFile(filepath.Join(dir, "sweep.csv"), sweepCSV(names, points)); err != nil {
		return err
	}
	if err := writeSweepPlot(dir, "sweep", sw.Scenario+": sweep of "+sw.Param, sw.Param, sweepYLabel(sw), names, points); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "report.md"), []byte(SweepMarkdown(sw, "")))
}

func sweepYLabel(sw *Sweep) string {
	if sw.Metric != "" {
		return sw.Metric
	}
	return "fair-share ratio"
}

// sweepPoints collects the plotted series: the sweep's metric when it has
// one, otherwise every flow's fair-share ratio.
func sweepPoints(sw *Sweep) ([]string, []SweepPoint) {
	var names []string
	if sw.Metric != "" {
		names = []string{sw.Metric}
	} else if len(sw.Runs) > 0 {
		for _, f := range sw.Runs[0].Summary.Flows {
			names = append(names, f.Name)
		}
	}
	var points []SweepPoint
	for _, r := range sw.Runs {
		pt := SweepPoint{Label: r.Summary.SweepValue, X: leadingNumber(r.Summary.SweepValue), Values: map[string]float64{}}
		if sw.Metric != "" {
			v, err := metrics.Lookup(r.Summary, sw.Metric)
			if err != nil {
				v = math.NaN()
			}
			pt.Values[sw.Metric] = v
		} else {
			for _, f := range r.Summary.Flows {
				pt.Values[f.Name] = f.FairShareRatio
			}
		}
		points = append(points, pt)
	}
	return names, points
}

// leadingNumber reads the number a value starts with ("150kbps" → 150).
func leadingNumber(s string) float64 {
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' || (end == 0 && s[end] == '-')) {
		end++
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func sweepCSV(names []string, points []SweepPoint) []byte {
	var b bytes.Buffer
	b.WriteString("value")
	for _, n := range names {
		b.WriteString("," + csvField(n))
	}
	b.WriteString("\n")
	for _, pt := range points {
		b.WriteString(csvField(pt.Label))
		for _, n := range names {
			b.WriteString("," + num(pt.Values[n]))
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// SweepTable is a markdown table with one row per swept value: each flow's
// throughput and fair-share ratio, Jain's index and the sweep's metric.
func SweepTable(sw *Sweep) string {
	if len(sw.Runs) == 0 {
		return ""
	}
	var b strings.Builder
	flows := sw.Runs[0].Summary.Flows
	b.WriteString("| " + paramLabel(sw.Param) + " |")
	for _, f := range flows {
		fmt.Fprintf(&b, " %s: Mbit/s (ratio), p95 queue |", f.Name)
	}
	b.WriteString(" Jain |")
	if sw.Metric != "" {
		b.WriteString(" " + sw.Metric + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(flows)+1))
	if sw.Metric != "" {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range sw.Runs {
		s := r.Summary
		b.WriteString("| " + s.SweepValue + " |")
		for i := range flows {
			if i < len(s.Flows) {
				f := s.Flows[i]
				fmt.Fprintf(&b, " %s (%.2f), %.0f ms |", mbps(f.ThroughputBps), f.FairShareRatio, f.QueueDelayMs.P95)
			}
		}
		fmt.Fprintf(&b, " %s |", optional(s.JainIndexAll, "%.3f"))
		if sw.Metric != "" {
			v, err := metrics.Lookup(s, sw.Metric)
			if err != nil {
				b.WriteString(" – |")
			} else {
				fmt.Fprintf(&b, " %s |", metricString(v))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// SweepMarkdown is a sweep's report; prefix is prepended to links.
func SweepMarkdown(sw *Sweep, prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: sweep of %s\n\n", sw.Scenario, sw.Param)
	if sw.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(sw.Description))
	}
	if sw.Reference != "" {
		fmt.Fprintf(&b, "**Reference:** %s\n\n", strings.TrimSpace(sw.Reference))
	}
	b.WriteString(SweepTable(sw))
	fmt.Fprintf(&b, "\n![sweep](%ssweep.svg)\n\nEach value's full report: ", prefix)
	for i, r := range sw.Runs {
		if i > 0 {
			b.WriteString(", ")
		}
		v := SafeName(r.Summary.SweepValue)
		fmt.Fprintf(&b, "[%s](%s%s/report.md)", r.Summary.SweepValue, prefix, v)
	}
	b.WriteString(".\n")
	return b.String()
}

// Entry is one scenario file's result in a suite: a single run or a sweep.
type Entry struct {
	Name  string // directory name inside the suite
	Run   *Run
	Sweep *Sweep
	Err   error
}

// WriteSuite writes the combined report and summary of a suite whose
// entries were already written into subdirectories of dir.
func WriteSuite(dir string, entries []Entry) error {
	var all []metrics.Summary
	var b strings.Builder
	b.WriteString("# Lab suite\n\n")
	for _, e := range entries {
		switch {
		case e.Err != nil:
			fmt.Fprintf(&b, "## %s\n\nFailed: %v\n\n", e.Name, e.Err)
		case e.Sweep != nil:
			for _, r := range e.Sweep.Runs {
				all = append(all, r.Summary)
			}
			b.WriteString("#" + SweepMarkdown(e.Sweep, e.Name+"/") + "\n")
		case e.Run != nil:
			all = append(all, e.Run.Summary)
			md := runMarkdown(e.Run, e.Name+"/")
			b.WriteString("#" + strings.ReplaceAll(md, "\n# ", "\n## ") + "\n")
		}
	}
	if _, groups, runs := groupSFU(entries); len(groups) > 0 {
		b.WriteString("# Layer policies (seed 000 tables)\n\n")
		for _, g := range groups {
			fmt.Fprintf(&b, "## %s\n\n%s", g, SFUTable(runs[g]))
		}
	}
	if err := writeJSON(filepath.Join(dir, "summary.json"), all); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "report.md"), []byte(b.String()))
}

// paramLabel shortens a list of swept fields to the first and a count.
func paramLabel(param string) string {
	parts := strings.Split(param, ",")
	if len(parts) == 1 {
		return param
	}
	return fmt.Sprintf("%s (+%d more)", parts[0], len(parts)-1)
}

// metricString prints large values (rates) whole and small ones with four
// significant digits.
func metricString(v float64) string {
	if math.Abs(v) >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}
