// Command chaos runs strata's abuse probes against strata, and where a probe applies against
// Debian's Janus beside it, each server started in a private network namespace with a generated
// configuration (internal/rig, as ./bench does): the bad-input battery over HTTP and WebSocket, a
// WebSocket burst, session create/destroy cycles, abandoned sessions, a candidate flood, an
// oversized offer, slow clients, SIGTERM with live calls, and fan-outs under a CPU hog and through
// loss and congestion bursts. It prints a table (probe, strata, Janus, bound, pass) and writes
// results.json into the output directory. It needs root; Janus is optional (--targets strata).
//
//	go run ./chaos --strata bin/strata --out chaos-out [--only battery,burst,...] [--targets strata,janus]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/rig"
)

type config struct {
	rig.Binaries
	out        string
	only       map[string]bool
	targets    []string
	fanout     int
	hold       time.Duration
	floodBound int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == hogCmd {
		hog()
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var only, targets string
	fs.StringVar(&c.out, "out", "chaos-out", "output directory")
	c.AddFlags(fs)
	fs.StringVar(&only, "only", strings.Join(allProbes, ","), "probes to run")
	fs.StringVar(&targets, "targets", "strata,janus", "servers to probe")
	fs.IntVar(&c.fanout, "fanout", 16, "subscribers of the fan-out probes")
	fs.DurationVar(&c.hold, "hold", 30*time.Second, "how long each fan-out holds its load")
	fs.IntVar(&c.floodBound, "flood-bound", 1000, "most connectivity checks the candidate flood may draw in its window")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c.only = map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		c.only[strings.TrimSpace(s)] = true
	}
	c.targets = strings.Split(targets, ",")
	floodBoundValue = c.floodBound
	// The candidate flood listens on one UDP socket per candidate.
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 65536, Max: 65536})
	if err := preflight(&c); err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rows, err := runAll(ctx, c, stderr)
	fmt.Fprint(stdout, table(rows))
	if werr := writeJSON(c.out, rows, args); werr != nil {
		err = errors.Join(err, werr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return 1
	}
	for _, r := range rows {
		if !r.Pass {
			return 3 // probes ran; some bound was not held
		}
	}
	return 0
}

func preflight(c *config) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root to create network namespaces")
	}
	if _, err := os.Stat(c.Strata); err != nil {
		return fmt.Errorf("strata binary: %w (run make build)", err)
	}
	var keep []string
	for _, t := range c.targets {
		if t != "janus" {
			keep = append(keep, t)
			continue
		}
		p, err := exec.LookPath(c.Janus)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos: janus not found (apt-get install -y janus): probing strata alone")
			continue
		}
		c.Janus = p
		keep = append(keep, t)
	}
	c.targets = keep
	return nil
}

// row is one probe's line in the table: what each server did, the bound strata must hold, and
// whether it held it. Janus's figure is there for comparison, not judged.
type row struct {
	Probe  string         `json:"probe"`
	Bound  string         `json:"bound"`
	Strata string         `json:"strata"`
	Janus  string         `json:"janus,omitempty"`
	Pass   bool           `json:"pass"`
	Data   map[string]any `json:"data,omitempty"`
}

func table(rows []row) string {
	var b strings.Builder
	b.WriteString("| probe | strata | Janus | bound (strata) | pass |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		j := r.Janus
		if j == "" {
			j = "–"
		}
		pass := "FAIL"
		if r.Pass {
			pass = "pass"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Probe, r.Strata, j, r.Bound, pass)
	}
	return b.String()
}

func writeJSON(dir string, rows []row, args []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(map[string]any{"args": args, "at": time.Now().UTC(), "probes": rows}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644)
}

func runAll(ctx context.Context, c config, log io.Writer) ([]row, error) {
	ns := rig.NewNetns("chaos")
	if err := ns.Up(); err != nil {
		_ = ns.Down()
		return nil, err
	}
	defer func() {
		if err := ns.Down(); err != nil {
			fmt.Fprintf(log, "chaos: %v\n", err)
		}
	}()
	var rows []row
	var errs []error
	for _, p := range probes() {
		if !c.only[p.name] || ctx.Err() != nil {
			continue
		}
		fmt.Fprintf(log, "== %s\n", p.name)
		rs, err := p.run(ctx, c, ns, log)
		rows = append(rows, rs...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	return rows, errors.Join(errs...)
}
