// Package lab is strata's network lab front end: it runs scenario files in
// the deterministic simulator and writes their metrics, time series, plots
// and reports. Main implements the `strata lab` command.
package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

const usage = `usage: strata lab <command> [arguments]

commands:
  run PATH... [--engine sim|emu] [--out DIR] [--seed N] [--jobs N] [--scale F] [--results FILE] [--only NAMES]
      [--cpuprofile FILE]
        run scenario files (a directory runs every .yaml file in it as a suite)
        and write summary.json, CSV series, plots and report.md into DIR
        (default lab-out); --results refreshes the generated tables of a
        results document such as docs/RESULTS.md. --engine emu runs them on
        real network stacks on this machine (needs root; one run at a time
        unless --jobs says otherwise). --only runs the named files of a suite
        (e.g. --only seed004,rfc8867/5.1)
  compare SIMDIR EMUDIR [--out FILE] [--results FILE] [--as NAME] [--labels A,B]
        compare two runs of the same scenarios (e.g. sim and emu): per-flow
        throughput share and p95 queuing delay side by side, as markdown
  phases RUNDIR... --at FROM-TO,...
        per-phase means of each flow's time series (rate, goodput, queuing
        delay mean and p95, RTT), e.g. --at 10s-60s,70s-120s,130s-240s
  selftest
        check the emulator's accuracy (delay, rate, loss, queue delay; needs root)
  check PATH...
        parse scenario files and report errors without running them
  controllers
        list the congestion controllers and their parameters
`

// Main runs the lab command line. args are the words after "lab"; it
// returns the process exit status (0 ok, 1 failure, 2 usage error).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	case "compare":
		return compareCmd(args[1:], stdout, stderr)
	case "phases":
		return phasesCmd(args[1:], stdout, stderr)
	case "selftest":
		return selftestCmd(args[1:], stdout, stderr)
	case "controllers":
		return controllersCmd(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "strata lab: unknown command %q\n%s", args[0], usage)
	return 2
}

// parseInterleaved parses flags that may come before or after positional
// arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata lab run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opt := Options{Out: "lab-out"}
	seed := fs.String("seed", "", "override every scenario's seed")
	fs.StringVar(&opt.Out, "out", opt.Out, "output directory")
	fs.StringVar(&opt.Engine, "engine", EngineSim, "sim (the simulator) or emu (real network stacks; needs root)")
	fs.IntVar(&opt.Jobs, "jobs", 0, "parallel runs (default: all cores; 1 with --engine emu)")
	fs.Float64Var(&opt.Scale, "scale", 1, "scale every scenario's time axis (e.g. 0.2 for short runs)")
	fs.StringVar(&opt.Results, "results", "", "refresh the generated tables of this results document")
	onlyList := fs.String("only", "", "comma-separated entry names (or directories, e.g. seed004) of a suite to run")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (asked for at 1 kHz)")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "strata lab run: %v\n", err)
			return 1
		}
		defer stop()
	}
	if len(paths) == 0 {
		fmt.Fprint(stderr, "strata lab run: give a scenario file or directory\n")
		return 2
	}
	if *onlyList != "" {
		opt.Only = strings.Split(*onlyList, ",")
	}
	if *seed != "" {
		v, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "strata lab run: --seed %q is not a whole number\n", *seed)
			return 2
		}
		opt.Seed = &v
	}
	opt.Progress = stderr
	opt.Terminal = isTerminal(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch opt.Engine {
	case EngineSim:
		collectLazily()
	case EngineEmu:
		if err := prepareEmu(); err != nil {
			fmt.Fprintf(stderr, "strata lab run: %v\n", err)
			return 1
		}
	default:
		fmt.Fprintf(stderr, "strata lab run: unknown engine %q (want %s or %s)\n", opt.Engine, EngineSim, EngineEmu)
		return 2
	}
	res, err := RunContext(ctx, paths, opt)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) {
			fmt.Fprintln(stderr, se.Error())
		} else {
			fmt.Fprintf(stderr, "strata lab run: %v\n", err)
		}
		return 1
	}
	if opt.Engine == EngineEmu {
		fmt.Fprintf(stdout, "%d runs in %.2f s of emulated time; results in %s\n", res.Runs, res.Simulated.Seconds(), opt.Out)
	} else {
		fmt.Fprintf(stdout, "%d runs, %d events in %.2f s of simulation time; results in %s\n",
			res.Runs, res.Events, res.Simulated.Seconds(), opt.Out)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "strata lab run: interrupted; the emulations were torn down")
		return 1
	}
	if res.Failed > 0 {
		fmt.Fprintf(stderr, "strata lab run: %d runs failed\n", res.Failed)
		return 1
	}
	return 0
}

func checkCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "strata lab check: give a scenario file or directory\n")
		return 2
	}
	files, err := collect(args)
	if err != nil {
		fmt.Fprintf(stderr, "strata lab check: %v\n", err)
		return 1
	}
	status := 0
	for _, f := range files {
		parsed, err := scenario.ParseFile(f.path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%d runs)\n", f.path, len(parsed.Runs))
	}
	return status
}

func controllersCmd(stdout io.Writer) int {
	names := sim.ControllerNames("")
	sort.Strings(names)
	for _, n := range names {
		info, _ := sim.LookupController(n)
		fmt.Fprintf(stdout, "%s (%s flows): %s\n", n, info.Kind, info.Doc)
		var ps []string
		for _, p := range info.Params {
			ps = append(ps, fmt.Sprintf("%s=%s (%s)", p.Name, p.Default, p.Unit))
		}
		fmt.Fprintf(stdout, "    %s\n", strings.Join(ps, ", "))
	}
	return 0
}

// simHeapLimit is the heap a simulator run may grow to before the garbage
// collector runs.
const simHeapLimit = 256 << 20

// collectLazily turns the garbage collector's proportional pacing off for a
// simulator run, leaving only the heap limit: one run allocates about 15 MB
// and exits, and collecting that costs more (about 6% of the process's time)
// than keeping it; a suite's runs collect once the heap reaches the limit.
// GOGC or GOMEMLIMIT in the environment take precedence.
func collectLazily() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(simHeapLimit)
}

// profileHz is the CPU profile's sampling rate: a single run takes tens of
// milliseconds, in which the default 100 Hz would take a handful of samples
// (the kernel's tick may allow fewer than asked for: about 250 Hz here).
const profileHz = 1000

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	// The rate set first wins: StartCPUProfile's own 100 Hz is refused
	// (the runtime prints a line saying so) and the profile records 1 kHz.
	runtime.SetCPUProfileRate(profileHz)
	if err := pprof.StartCPUProfile(f); err != nil {
		runtime.SetCPUProfileRate(0)
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
