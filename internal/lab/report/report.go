// Package report writes a lab run's results: summary.json, per-flow and
// per-link CSV time series, PNG and SVG plots, report.md, the combined
// report of a suite or sweep, and the generated tables of docs/RESULTS.md.
// Everything it writes is a pure function of the results, so the same run
// gives byte-identical files.
package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/lab/metrics"
)

// Run is one finished simulation run, ready to be written.
type Run struct {
	Summary     metrics.Summary
	Flows       []metrics.FlowSeries
	Links       []metrics.LinkSeries
	Description string
	Reference   string
	// Bottleneck names the link whose capacity the rate plot shows.
	Bottleneck string
	// Layers are the per-layer series of an SFU run (nil without an SFU).
	Layers []metrics.LayerSeries
}

// WriteRun writes a run's files into dir. The files are independent, so
// they are written concurrently: the plots dominate, and a machine with more
// than one core draws them side by side.
func WriteRun(dir string, r *Run) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	jobs := plotJobs(dir, r)
	if len(r.Layers) > 0 {
		jobs = append(jobs, layerPlotJobs(dir, r)...)
	}
	jobs = append(jobs,
		func() error { return writeJSON(filepath.Join(dir, "summary.json"), r.Summary) },
		func() error { return writeFile(filepath.Join(dir, "report.md"), []byte(runMarkdown(r, ""))) })
	for _, f := range r.Flows {
		jobs = append(jobs, func() error { return writeFile(filepath.Join(dir, "flow-"+SafeName(f.Name)+".csv"), flowCSV(f)) })
	}
	for _, l := range r.Links {
		jobs = append(jobs, func() error { return writeFile(filepath.Join(dir, "link-"+SafeName(l.Name)+".csv"), linkCSV(l)) })
	}
	return runAll(jobs)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(data, '\n'))
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// SafeName maps a name onto characters that are safe in file names.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '+':
			return r
		}
		return '_'
	}, s)
}

// num formats a CSV number: empty for NaN, otherwise the shortest exact
// representation with at most 6 decimals.
func num(x float64) string { return string(appendNum(nil, x)) }

// appendNum appends num(x). Below 10⁹ the value rounded to 6 decimals is
// n/10⁶ for a whole n that a float64 holds exactly, and its shortest
// representation is n's digits with the decimal point put in and trailing
// zeros dropped (any shorter decimal would be at least 10⁻⁶ away, more than
// a float64 spacing there), which is much cheaper than strconv's shortest
// formatting; larger values take strconv's way.
func appendNum(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return b
	}
	r := math.Round(x * 1e6)
	if math.Abs(r) >= 1e15 {
		return strconv.AppendFloat(b, r/1e6, 'f', -1, 64)
	}
	n := int64(r)
	if n < 0 || (n == 0 && math.Signbit(r)) {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/1e6, 10)
	frac := n % 1e6
	if frac == 0 {
		return b
	}
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 7
	for digits[end-1] == '0' {
		end--
	}
	return append(b, digits[:end]...)
}

// appendRow appends one CSV row of numbers.
func appendRow(b []byte, cols ...float64) []byte {
	for i, x := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, x)
	}
	return append(b, '\n')
}

func flowCSV(f metrics.FlowSeries) []byte {
	b := make([]byte, 0, 80*(len(f.T)+1))
	b = append(b, "time_s,rate_bps,goodput_bps,send_bps,target_bps,cwnd_bytes,queue_delay_ms,rtt_ms,lost_packets\n"...)
	for i := range f.T {
		b = appendRow(b, f.T[i], f.Rate[i], f.Goodput[i], f.Send[i], f.Target[i], f.Cwnd[i], f.QDelayMs[i], f.RTTMs[i], f.Lost[i])
	}
	return b
}

func linkCSV(l metrics.LinkSeries) []byte {
	b := make([]byte, 0, 64*(len(l.T)+1))
	b = append(b, "time_s,capacity_bps,throughput_bps,utilization,queue_delay_ms,max_backlog_bytes,drops\n"...)
	for i := range l.T {
		b = appendRow(b, l.T[i], l.Capacity[i], l.Throughput[i], l.Utilization[i], l.QDelayMs[i], l.BacklogB[i], l.Drops[i])
	}
	return b
}
