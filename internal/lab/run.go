package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/report"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// Options controls a lab run.
type Options struct {
	Out string
	// Engine runs the scenarios: EngineSim (the default) or EngineEmu.
	Engine  string
	Seed    *uint64 // overrides every scenario's seed when set
	Jobs    int     // parallel runs; 0 means all cores (one run at a time in emulation)
	Scale   float64 // time-axis scale (1 = as written)
	Results string  // results document to refresh, if any
	// Only keeps the files whose entry name is one of these or lies below
	// one ("seed004" keeps seed004/nada-vs-cubic); empty keeps all.
	Only     []string
	Progress io.Writer
	Terminal bool // draw a progress bar rather than lines
}

// Result summarises what Run did.
type Result struct {
	Runs, Failed int
	// Skipped lists the files of a suite the engine cannot run, with why.
	Skipped   []string
	Events    uint64
	Simulated time.Duration
	Entries   []report.Entry
}

// scenarioFile is a file found under a path, with its entry name.
type scenarioFile struct {
	path, name string
	parsed     *scenario.File
}

// collect expands the paths into scenario files; a directory contributes
// every .yaml/.yml file below it, named by its path relative to the
// directory without the extension.
func collect(paths []string) ([]scenarioFile, error) {
	var out []scenarioFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, scenarioFile{path: p, name: strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))})
			continue
		}
		var found []scenarioFile
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
				rel, _ := filepath.Rel(p, path)
				found = append(found, scenarioFile{path: path, name: filepath.ToSlash(strings.TrimSuffix(rel, ext))})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Slice(found, func(i, j int) bool { return found[i].name < found[j].name })
		out = append(out, found...)
	}
	return out, nil
}

// only keeps the files named by (or below) one of names; all without names.
func only(files []scenarioFile, names []string) []scenarioFile {
	if len(names) == 0 {
		return files
	}
	var out []scenarioFile
	for _, f := range files {
		for _, n := range names {
			if n = strings.Trim(n, "/"); f.name == n || strings.HasPrefix(f.name, n+"/") {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// job is one simulation: run r of file f.
type job struct{ f, r int }

// Run is RunContext without cancellation.
func Run(paths []string, opt Options) (*Result, error) {
	return RunContext(context.Background(), paths, opt)
}

// RunContext parses every scenario under paths (stopping on any error, so
// that nothing runs), runs them on Jobs workers with the chosen engine, and
// writes the results under opt.Out: a single file's results go into opt.Out
// itself, a suite's into one subdirectory per file plus a combined report.
// Cancelling ctx ends the running emulations (cleaning up) and skips the
// rest.
func RunContext(ctx context.Context, paths []string, opt Options) (*Result, error) {
	if opt.Engine == "" {
		opt.Engine = EngineSim
	}
	files, err := collect(paths)
	if err != nil {
		return nil, err
	}
	files = only(files, opt.Only)
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenario files under %s", strings.Join(paths, ", "))
	}
	var problems []string
	for i := range files {
		files[i].parsed, err = scenario.ParseFile(files[i].path)
		if err != nil {
			var se *scenario.Error
			if errors.As(err, &se) {
				problems = append(problems, se.Problems...)
			} else {
				problems = append(problems, err.Error())
			}
		}
	}
	if len(problems) > 0 {
		return nil, &scenario.Error{Problems: problems}
	}
	suite := len(files) > 1 || isDir(paths[0])
	res := &Result{}
	if files, res.Skipped, err = runnable(files, opt.Engine, suite); err != nil {
		return nil, err
	}
	var jobs []job
	for i, f := range files {
		for r, s := range f.parsed.Runs {
			if opt.Scale > 0 {
				s.ScaleTime(opt.Scale)
			}
			jobs = append(jobs, job{i, r})
		}
	}
	runs := make([][]*report.Run, len(files))
	errs := make([][]error, len(files))
	for i, f := range files {
		runs[i] = make([]*report.Run, len(f.parsed.Runs))
		errs[i] = make([]error, len(f.parsed.Runs))
	}
	dirOf := func(f int) string {
		if suite {
			return filepath.Join(opt.Out, filepath.FromSlash(files[f].name))
		}
		return opt.Out
	}
	for _, why := range res.Skipped {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "lab: skipping %s\n", why)
		}
	}
	prog := newProgress(opt.Progress, opt.Terminal, len(jobs))
	var mu sync.Mutex
	work := make(chan job)
	var wg sync.WaitGroup
	workers := opt.Jobs
	if workers <= 0 {
		workers = runtime.NumCPU()
		if opt.Engine == EngineEmu {
			workers = 1 // real time on a shared machine: one run at a time unless asked
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				f := files[j.f]
				s := f.parsed.Runs[j.r]
				dir := dirOf(j.f)
				if f.parsed.Sweep != nil {
					dir = filepath.Join(dir, report.SafeName(s.SweepValue))
				}
				start := time.Now()
				r, events, err := runOne(ctx, s, opt, dir)
				mu.Lock()
				runs[j.f][j.r], errs[j.f][j.r] = r, err
				res.Runs++
				res.Events += events
				res.Simulated += s.Duration
				if err != nil {
					res.Failed++
				}
				mu.Unlock()
				prog.done(f.name+label(s), time.Since(start), err)
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	prog.finish()

	for i, f := range files {
		e := report.Entry{Name: f.name}
		for _, err := range errs[i] {
			if err != nil {
				e.Err = err
			}
		}
		if e.Err == nil {
			if sw := f.parsed.Sweep; sw != nil {
				s0 := f.parsed.Runs[0]
				e.Sweep = &report.Sweep{Scenario: s0.Name, Param: sw.Param, Metric: sw.Metric,
					Description: s0.Description, Reference: s0.Reference, Runs: runs[i]}
				if err := report.WriteSweep(dirOf(i), e.Sweep); err != nil {
					return nil, err
				}
			} else {
				e.Run = runs[i][0]
			}
		}
		res.Entries = append(res.Entries, e)
	}
	if suite {
		if err := report.WriteSuite(opt.Out, res.Entries); err != nil {
			return nil, err
		}
	}
	if opt.Results != "" {
		if err := report.UpdateResults(opt.Results, resultEntries(opt.Engine, res.Entries)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// runOne runs one scenario with the chosen engine and writes its files into
// dir. The returned Run keeps only the summary (the series are written and
// dropped).
func runOne(ctx context.Context, s *scenario.Scenario, opt Options, dir string) (*report.Run, uint64, error) {
	seed := s.Seed
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	rec, err := record(ctx, s, seed, opt.Engine, dir)
	if err != nil {
		return nil, 0, err
	}
	// The summary and the time series read the recording independently: on
	// a second core they take half the time.
	var summary metrics.Summary
	summarized := make(chan struct{})
	go func() {
		defer close(summarized)
		summary = metrics.Summarize(rec, metrics.Meta{Scenario: s.Name, Seed: seed, SweepParam: s.SweepParam, SweepValue: s.SweepValue})
	}()
	flows, links := metrics.Series(rec)
	<-summarized
	r := &report.Run{Summary: summary, Flows: flows, Links: links, Description: s.Description, Reference: s.Reference,
		Bottleneck: bottleneckOf(summary), Layers: metrics.LayerSeriesOf(rec)}
	if err := report.WriteRun(dir, r); err != nil {
		return nil, 0, err
	}
	r.Flows, r.Links, r.Layers = nil, nil, nil
	return r, rec.Events, nil
}

// bottleneckOf picks the link to draw as capacity in the rate plot.
func bottleneckOf(s metrics.Summary) string {
	if s.Bottleneck != "" {
		return s.Bottleneck
	}
	for _, f := range s.Flows {
		if f.Bottleneck != "" {
			return f.Bottleneck
		}
	}
	return ""
}

func label(s *scenario.Scenario) string {
	if s.SweepValue == "" {
		return ""
	}
	return " " + s.SweepParam + "=" + s.SweepValue
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
