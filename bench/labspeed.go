package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/load/report"
)

// The lab-speed scenario times strata's lab against ns-3 3.37 on the
// simulator's yardstick: the 100 s six-flow NewReno dumbbell of
// scenarios/examples/ns3-dumbbell.yaml, which is what tools/ns3/tcp-dumbbell.cc
// runs with its defaults. Both are timed as whole processes, start-up
// included, from outside: `strata lab run FILE --out DIR` (parsing, the
// simulation, summary, CSVs, report and four plots) against the ns-3 program
// (which prints one line of JSON). The runs alternate, strata then ns-3, so a
// drift in the machine's speed hits both; wall time is the monotonic clock
// around start and reap, CPU the child's user + system time from rusage.

const (
	labSpeedScenario = "lab-speed"
	labSpeedFile     = "scenarios/examples/ns3-dumbbell.yaml"
)

// ns3DumbbellArgs are the ns-3 program's flags for the same run (its
// defaults, spelled out).
var ns3DumbbellArgs = []string{"--flows=6", "--rate=10Mbps", "--delay=20", "--queue=100", "--tcp=newreno",
	"--duration=100", "--seed=1", "--jitter=1", "--sack=true"}

// goalLabSpeedup is issue 20's bound: `strata lab run` at least 50 times
// faster than ns-3 on the dumbbell, whole process against whole process.
const goalLabSpeedup = 50

// goal is the lab's line of the bench's verdict: the ratio of the median
// wall-clock times, strata over ns-3.
func (r *labSpeed) goal() goal {
	wall := func(p processRun) float64 { return p.wall }
	s, _, _ := spread(r.strata, wall)
	n, _, _ := spread(r.ns3, wall)
	return goal{name: "`strata lab run` wall clock over ns-3's (medians)", scenario: labSpeedScenario, where: "ns3-dumbbell",
		value: s / n, bound: 1.0 / goalLabSpeedup, format: "%.4f"}
}

// processRun is one timed process.
type processRun struct {
	wall, cpu float64 // seconds
}

// labSpeed is the scenario's outcome.
type labSpeed struct {
	strata, ns3 []processRun
	// ns3Missing says why ns-3 did not run (empty when it did).
	ns3Missing string
	ns3Binary  string
	loadBefore float64
	loadAfter  float64
}

// runLabSpeed builds (or finds) the ns-3 program, then runs strata and ns-3
// in turn after one warm-up run of strata.
func runLabSpeed(ctx context.Context, c config, log io.Writer) (*labSpeed, error) {
	res := &labSpeed{loadBefore: report.LoadAverage()}
	dir, err := filepath.Abs(filepath.Join(c.out, labSpeedScenario))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ns3, err := ns3Program()
	if err != nil {
		res.ns3Missing = err.Error()
		fmt.Fprintf(log, "bench: lab-speed runs strata alone: %v\n", err)
	}
	res.ns3Binary = ns3
	out := filepath.Join(dir, "strata-out")
	strata := func() (processRun, error) {
		if err := os.RemoveAll(out); err != nil {
			return processRun{}, err
		}
		return timeProcess(ctx, filepath.Join(dir, "strata.log"), c.Strata, "lab", "run", labSpeedFile, "--out", out)
	}
	other := func() (processRun, error) {
		return timeProcess(ctx, filepath.Join(dir, "ns3.json"), ns3, ns3DumbbellArgs...)
	}
	for i := 0; i <= c.labSpeedRuns; i++ { // run 0 warms strata up (ns-3 runs for seconds: no warm-up)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		s, err := strata()
		if err != nil {
			return res, fmt.Errorf("strata lab run: %w (log in %s)", err, filepath.Join(dir, "strata.log"))
		}
		if i > 0 {
			res.strata = append(res.strata, s)
		}
		if ns3 == "" || i == 0 {
			continue
		}
		n, err := other()
		if err != nil {
			return res, fmt.Errorf("ns-3: %w", err)
		}
		res.ns3 = append(res.ns3, n)
		fmt.Fprintf(log, "== lab-speed %d: strata %.3f s, ns-3 %.3f s\n", i, s.wall, n.wall)
	}
	res.loadAfter = report.LoadAverage()
	var b strings.Builder
	writeLabSpeed(&b, c, res)
	return res, os.WriteFile(filepath.Join(dir, "report.md"), []byte("# "+labSpeedTitle+"\n\n"+b.String()), 0o644)
}

const labSpeedTitle = "Lab speed: `strata lab run` against ns-3 3.37, 100 s six-flow NewReno dumbbell"

// timeProcess runs name with args, its output into logPath, and returns its
// wall-clock and CPU time.
func timeProcess(ctx context.Context, logPath, name string, args ...string) (processRun, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return processRun{}, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		return processRun{}, err
	}
	st := cmd.ProcessState
	return processRun{wall: wall, cpu: (st.UserTime() + st.SystemTime()).Seconds()}, nil
}

// ns3Program builds tools/ns3/tcp-dumbbell.cc into the user's cache, as the
// fidelity test does, unless an up-to-date build is there.
func ns3Program() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "strata", "ns3", "tcp-dumbbell")
	src := filepath.Join("tools", "ns3", "tcp-dumbbell.cc")
	sst, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("run the bench from the repository's root: %w", err)
	}
	if bst, err := os.Stat(bin); err == nil && bst.ModTime().After(sst.ModTime()) {
		return bin, nil
	}
	out, err := exec.Command("sh", filepath.Join("tools", "ns3", "build.sh"), bin).CombinedOutput()
	if err != nil {
		return "", errors.New("ns-3 3.37 is not installed (apt-get install -y libns3-dev g++ pkg-config): " +
			strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// spread is the median, min and max of one figure over runs.
func spread(runs []processRun, figure func(processRun) float64) (med, lo, hi float64) {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = figure(r)
	}
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0, 0, 0
	}
	med = xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return med, xs[0], xs[len(xs)-1]
}

// writeLabSpeed renders the scenario: median, min and max of wall and CPU
// time per side, and how many times faster strata is (ns-3 over strata, of
// the medians and per alternating pair).
func writeLabSpeed(b *strings.Builder, c config, r *labSpeed) {
	if r == nil {
		b.WriteString("No run completed.\n\n")
		return
	}
	fmt.Fprintf(b, "Whole processes, start-up included, timed from outside; %d runs of each, alternating, after one warm-up run of strata. "+
		"strata: `%s lab run %s --out DIR` (summary, CSVs, report and plots); ns-3: `tools/ns3/tcp-dumbbell %s`. "+
		"Load average (1 min) %.2f before, %.2f after.\n\n",
		len(r.strata), c.Strata, labSpeedFile, strings.Join(ns3DumbbellArgs, " "), r.loadBefore, r.loadAfter)
	wall := func(p processRun) float64 { return p.wall }
	cpu := func(p processRun) float64 { return p.cpu }
	b.WriteString("| figure | strata median (min–max) | ns-3 median (min–max) | ns-3 / strata |\n|---|---:|---:|---:|\n")
	for _, f := range []struct {
		name string
		get  func(processRun) float64
	}{{"wall clock (ms)", wall}, {"CPU, user + system (ms)", cpu}} {
		sm, slo, shi := spread(r.strata, f.get)
		fmt.Fprintf(b, "| %s | %.1f (%.1f–%.1f) |", f.name, 1e3*sm, 1e3*slo, 1e3*shi)
		if len(r.ns3) == 0 {
			b.WriteString(" – | – |\n")
			continue
		}
		nm, nlo, nhi := spread(r.ns3, f.get)
		fmt.Fprintf(b, " %.1f (%.1f–%.1f) | %.1f× |\n", 1e3*nm, 1e3*nlo, 1e3*nhi, nm/sm)
	}
	if len(r.ns3) > 0 {
		var pairs []processRun
		for i := range min(len(r.strata), len(r.ns3)) {
			pairs = append(pairs, processRun{wall: r.ns3[i].wall / r.strata[i].wall})
		}
		med, lo, hi := spread(pairs, wall)
		fmt.Fprintf(b, "\nns-3 / strata wall clock per pair: median %.1f× (%.1f–%.1f×).\n", med, lo, hi)
	} else {
		fmt.Fprintf(b, "\nns-3 did not run: %s\n", r.ns3Missing)
	}
	b.WriteString("\n")
}
