// Package report writes a lab run's results: summary.json, per-flow and
// per-link CSV time series, PNG and SVG plots, report.md, the combined
// report of a suite or sweep, and the generated tables of docs/RESULTS.md.
// Everything it writes is a pure function of the results, so the same run
// gives byte-identical files.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// WriteRun writes a run's files into dir.
func WriteRun(dir string, r *Run) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "summary.json"), r.Summary); err != nil {
		return err
	}
	for _, f := range r.Flows {
		if err := writeFile(filepath.Join(dir, "flow-"+SafeName(f.Name)+".csv"), flowCSV(f)); err != nil {
			return err
		}
	}
	for _, l := range r.Links {
		if err := writeFile(filepath.Join(dir, "link-"+SafeName(l.Name)+".csv"), linkCSV(l)); err != nil {
			return err
		}
	}
	if err := writePlots(dir, r); err != nil {
		return err
	}
	if len(r.Layers) > 0 {
		if err := writeLayerPlots(dir, r); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, "report.md"), []byte(runMarkdown(r, "")))
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
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64)
}

func flowCSV(f metrics.FlowSeries) []byte {
	var b bytes.Buffer
	b.WriteString("time_s,rate_bps,goodput_bps,send_bps,target_bps,cwnd_bytes,queue_delay_ms,rtt_ms,lost_packets\n")
	for i := range f.T {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", num(f.T[i]), num(f.Rate[i]), num(f.Goodput[i]), num(f.Send[i]),
			num(f.Target[i]), num(f.Cwnd[i]), num(f.QDelayMs[i]), num(f.RTTMs[i]), num(f.Lost[i]))
	}
	return b.Bytes()
}

func linkCSV(l metrics.LinkSeries) []byte {
	var b bytes.Buffer
	b.WriteString("time_s,capacity_bps,throughput_bps,utilization,queue_delay_ms,max_backlog_bytes,drops\n")
	for i := range l.T {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n", num(l.T[i]), num(l.Capacity[i]), num(l.Throughput[i]),
			num(l.Utilization[i]), num(l.QDelayMs[i]), num(l.BacklogB[i]), num(l.Drops[i]))
	}
	return b.Bytes()
}
