package lab

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/report"
)

// prepareEmu checks that emulation can run here and removes what killed
// earlier emulations left behind.
func prepareEmu() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the emulator needs root (it creates network namespaces and TUN devices); run this as root (euid %d)", os.Geteuid())
	}
	if err := topo.Reap(); err != nil {
		return fmt.Errorf("removing the remains of dead emulations: %w", err)
	}
	return nil
}

// selftestCmd runs the emulator's accuracy self-test.
func selftestCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "strata lab selftest: takes no arguments\n")
		return 2
	}
	if err := prepareEmu(); err != nil {
		fmt.Fprintf(stderr, "strata lab selftest: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := topo.SelfTest(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "strata lab selftest: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "strata lab selftest: ok")
	return 0
}

// compareCmd compares two result directories (typically a simulator and an
// emulator run of the same scenarios).
func compareCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata lab compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the markdown here (default: standard output)")
	results := fs.String("results", "", "refresh the comparison tables of this results document")
	as := fs.String("as", "", "name the comparison's tables NAME/<run> (default: the runs' names)")
	labels := fs.String("labels", "", "the two sides' names, comma-separated (default: their engines, or directories)")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(dirs) != 2 {
		fmt.Fprint(stderr, "strata lab compare: give two result directories (e.g. the sim and the emu run's --out)\n")
		return 2
	}
	var sums [2]map[string]metrics.Summary
	for i, d := range dirs {
		if sums[i], err = report.LoadSummaries(d); err != nil {
			fmt.Fprintf(stderr, "strata lab compare: %v\n", err)
			return 1
		}
		if len(sums[i]) == 0 {
			fmt.Fprintf(stderr, "strata lab compare: no summary.json under %s\n", d)
			return 1
		}
	}
	pairs, missing := report.Pair(sums[0], sums[1])
	if *as != "" {
		for i := range pairs {
			pairs[i].Name = *as + "/" + pairs[i].Name
		}
		if len(pairs) == 1 {
			pairs[0].Name = *as
		}
	}
	a, b := engineOf(sums[0]), engineOf(sums[1])
	if a == b {
		a, b = filepath.Base(filepath.Clean(dirs[0])), filepath.Base(filepath.Clean(dirs[1]))
	}
	if *labels != "" {
		l := strings.SplitN(*labels, ",", 2)
		if len(l) != 2 {
			fmt.Fprintf(stderr, "strata lab compare: --labels wants two names, comma-separated\n")
			return 2
		}
		a, b = l[0], l[1]
	}
	md := report.CompareReport(pairs, missing, a, b)
	if *out == "" {
		fmt.Fprint(stdout, md)
	} else if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		fmt.Fprintf(stderr, "strata lab compare: %v\n", err)
		return 1
	}
	if *results != "" {
		if err := report.UpdateComparisons(*results, pairs, a, b); err != nil {
			fmt.Fprintf(stderr, "strata lab compare: %v\n", err)
			return 1
		}
	}
	return 0
}

// engineOf is the engine the summaries name (any one of them).
func engineOf(sums map[string]metrics.Summary) string {
	for _, s := range sums {
		return s.Engine
	}
	return ""
}
