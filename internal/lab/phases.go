package lab

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A phase is a stretch of a run in which the set of active flows is fixed (seed 002: one transfer
// alone, two transfers, two transfers and TCP). Whole-run figures mix them; the paper's claims
// are about each.
type phase struct{ from, to time.Duration }

// phaseRow is one flow's means over one phase, from its time-series file.
type phaseRow struct {
	flow                        string
	rate, goodput               float64 // bit/s
	qMean, qP95, rtt            float64 // ms; NaN without samples
	rateBins, qBins, rttSamples int
}

// phasesCmd implements `strata lab phases RUNDIR --at A-B,C-D`.
func phasesCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata lab phases", flag.ContinueOnError)
	fs.SetOutput(stderr)
	at := fs.String("at", "", "comma-separated phases FROM-TO of run time, e.g. 10s-60s,70s-120s")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	phases, err := parsePhases(*at)
	if err != nil || len(dirs) == 0 {
		fmt.Fprintf(stderr, "strata lab phases: give run directories and --at FROM-TO,...: %v\n", err)
		return 2
	}
	for _, d := range dirs {
		rows, err := phaseTable(d, phases)
		if err != nil {
			fmt.Fprintf(stderr, "strata lab phases: %v\n", err)
			return 1
		}
		writePhases(stdout, d, phases, rows)
	}
	return 0
}

func parsePhases(s string) ([]phase, error) {
	if s == "" {
		return nil, errors.New("no phases")
	}
	var out []phase
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), "-")
		from, e1 := time.ParseDuration(a)
		to, e2 := time.ParseDuration(b)
		if !ok || e1 != nil || e2 != nil || from < 0 || to <= from {
			return nil, fmt.Errorf("phase %q: want FROM-TO with units and FROM < TO, e.g. 10s-60s", part)
		}
		out = append(out, phase{from, to})
	}
	return out, nil
}

// phaseTable reads every flow-*.csv of dir and returns, per phase, one row per flow.
func phaseTable(dir string, phases []phase) ([][]phaseRow, error) {
	files, err := filepath.Glob(filepath.Join(dir, "flow-*.csv"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no flow-*.csv time series (a run's directory, not a suite's)", dir)
	}
	sort.Strings(files)
	out := make([][]phaseRow, len(phases))
	for _, f := range files {
		cols, err := readSeries(f)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "flow-"), ".csv")
		for i, p := range phases {
			out[i] = append(out[i], phaseOf(name, cols, p))
		}
	}
	return out, nil
}

// readSeries reads a time-series CSV into columns by header name; empty cells are NaN.
func readSeries(path string) (map[string][]float64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(recs) < 1 {
		return nil, fmt.Errorf("%s: not a time series: %v", path, err)
	}
	cols := map[string][]float64{}
	for _, rec := range recs[1:] {
		for j, h := range recs[0] {
			v := math.NaN()
			if j < len(rec) && rec[j] != "" {
				if v, err = strconv.ParseFloat(rec[j], 64); err != nil {
					return nil, fmt.Errorf("%s: column %s: %v", path, h, err)
				}
			}
			cols[h] = append(cols[h], v)
		}
	}
	for _, need := range []string{"time_s", "rate_bps", "goodput_bps", "queue_delay_ms", "rtt_ms"} {
		if _, ok := cols[need]; !ok {
			return nil, fmt.Errorf("%s: no %s column", path, need)
		}
	}
	return cols, nil
}

// phaseOf averages a flow's bins whose start lies in p: rates over every bin, the queuing delay
// and RTT over the bins that have one (p95 over the bins' queuing delays).
func phaseOf(name string, cols map[string][]float64, p phase) phaseRow {
	r := phaseRow{flow: name}
	var q, rtt []float64
	for i, t := range cols["time_s"] {
		at := time.Duration(t * float64(time.Second))
		if at < p.from || at >= p.to {
			continue
		}
		r.rateBins++
		r.rate += nanZero(cols["rate_bps"][i])
		r.goodput += nanZero(cols["goodput_bps"][i])
		if v := cols["queue_delay_ms"][i]; !math.IsNaN(v) {
			q = append(q, v)
		}
		if v := cols["rtt_ms"][i]; !math.IsNaN(v) {
			rtt = append(rtt, v)
		}
	}
	if r.rateBins > 0 {
		r.rate /= float64(r.rateBins)
		r.goodput /= float64(r.rateBins)
	}
	r.qBins, r.rttSamples = len(q), len(rtt)
	r.qMean, r.rtt = mean(q), mean(rtt)
	r.qP95 = math.NaN()
	if len(q) > 0 {
		sort.Float64s(q)
		r.qP95 = q[min(len(q)-1, int(math.Ceil(0.95*float64(len(q))))-1)]
	}
	return r
}

func nanZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func writePhases(w io.Writer, dir string, phases []phase, rows [][]phaseRow) {
	fmt.Fprintf(w, "%s\n\n| phase | flow | rate (Mbit/s) | goodput (Mbit/s) | queuing delay mean / p95 (ms) | RTT mean (ms) |\n|---|---|---:|---:|---:|---:|\n", dir)
	for i, p := range phases {
		for _, r := range rows[i] {
			fmt.Fprintf(w, "| %v–%v | %s | %.3f | %.3f | %s / %s | %s |\n", p.from, p.to, r.flow, r.rate/1e6, r.goodput/1e6,
				ms(r.qMean), ms(r.qP95), ms(r.rtt))
		}
	}
	fmt.Fprintln(w)
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
