package netctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/agent"
	"github.com/strata-rtc/strata/internal/netctl/switchctl"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// Main runs `strata netctl SUBCOMMAND [flags]` and returns the exit code: 0 on success (or a clean
// stop by SIGINT/SIGTERM), 1 on failure, 2 on bad usage.
//
//	strata netctl serve -topology FILE [-listen ADDR] [-mode joint|paper] [-margin 0.1]
//	                    [-switch NODE=unix:/path/br0.mgmt ...] [-resync 1s] ...
//	strata netctl agent -controller URL -node NAME [-interfaces eth0,eth1] [-interval 1s]
//	strata netctl check -topology FILE
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdout, stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serveCmd(ctx, args[1:], stdout, stderr)
	case "agent":
		return agentCmd(ctx, args[1:], stderr)
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "strata netctl: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: strata netctl <command> [flags]

  serve   run the network controller (HTTP API under /v1/, status page at /)
  agent   report this node's interface counters to a controller
  check   validate a topology file

Run "strata netctl <command> -h" for the flags of a command; docs/NETCTL.md has the details.
`)
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata netctl serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := DefaultConfig()
	topoFile := fs.String("topology", "", "topology file (YAML; required)")
	listen := fs.String("listen", "127.0.0.1:9080", "address to serve the API and status page on")
	tick := fs.Duration("tick", 250*time.Millisecond, "how often decisions are recomputed without any request")
	verbose := fs.Bool("v", false, "log every change")
	fs.StringVar(&cfg.Alloc.Mode, "mode", cfg.Alloc.Mode, "allocation: joint (max-min fair, margin, hysteresis) or paper (seed 000's Algorithm 1 per path)")
	fs.Float64Var(&cfg.Alloc.Margin, "margin", cfg.Alloc.Margin, "headroom a new layer needs, as a fraction of its rate")
	fs.Float64Var(&cfg.Alloc.KeepMargin, "keep-margin", cfg.Alloc.KeepMargin, "headroom a granted layer needs to be kept")
	fs.BoolVar(&cfg.Alloc.KeepBase, "keep-base", cfg.Alloc.KeepBase, "always allow the base layer, even when it does not fit")
	fs.DurationVar(&cfg.Alloc.Hold, "hold", cfg.Alloc.Hold, "how long the next layer must fit before an upgrade")
	fs.DurationVar(&cfg.Alloc.HoldMax, "hold-max", cfg.Alloc.HoldMax, "longest hold after repeated failed upgrades")
	fs.DurationVar(&cfg.Alloc.FailWindow, "fail-window", cfg.Alloc.FailWindow, "a downgrade this soon after an upgrade doubles the hold")
	fs.DurationVar(&cfg.StaleAfter, "stale", cfg.StaleAfter, "link load samples older than this are ignored (static capacity is used)")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "how long a changed decision's old rate is still attributed to it")
	fs.Float64Var(&cfg.Reserve, "reserve", cfg.Reserve, "media reservation: on links leaving an enforcer, media may use this share of the capacity whatever the background, and the switch meters the rest (0: none)")
	fs.Int64Var(&cfg.MeterBurst, "meter-burst", cfg.MeterBurst, "the reservation meters' bucket, in bits")
	fs.DurationVar(&cfg.MeterRise, "meter-rise", cfg.MeterRise, "a new meter opens from the reservation's floor to its rate over this long (0: at once)")
	fs.DurationVar(&cfg.PeakHold, "peak-hold", cfg.PeakHold, "with a reservation, streams' layers are allocated and metered at their peak over this window (0: at their current rate)")
	var switches []switchctl.Config
	fs.Func("switch", "an OpenFlow switch enforcing NODE's drop rules, as NODE=unix:/path/BRIDGE.mgmt (repeatable)", func(v string) error {
		node, target, ok := strings.Cut(v, "=")
		if !ok || node == "" || target == "" {
			return fmt.Errorf("want NODE=TARGET (e.g. paris=unix:/run/sw/br0.mgmt), got %q", v)
		}
		switches = append(switches, switchctl.Config{Node: node, Target: target})
		return nil
	})
	resync := fs.Duration("resync", time.Second, "how often each switch's flows are checked and reinstalled if they differ")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *resync <= 0 {
		fmt.Fprintln(stderr, "strata netctl serve: -resync must be positive")
		return 2
	}
	if *topoFile == "" || fs.NArg() > 0 || *tick <= 0 {
		fmt.Fprintln(stderr, "strata netctl serve: -topology FILE is required (and -tick must be positive)")
		fs.Usage()
		return 2
	}
	t, err := topo.Load(*topoFile)
	if err != nil {
		fmt.Fprintf(stderr, "strata netctl serve: %v\n", err)
		return 1
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	enforcers, err := newEnforcers(t, switches, *resync, log)
	if err != nil {
		fmt.Fprintf(stderr, "strata netctl serve: %v\n", err)
		return 2
	}
	opts := make([]Option, 0, len(enforcers))
	status := make([]SwitchStatus, 0, len(enforcers))
	for _, e := range enforcers {
		opts, status = append(opts, WithEnforcer(e)), append(status, e)
	}
	ctl, err := New(t, cfg, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "strata netctl serve: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "strata netctl serve: %v\n", err)
		return 1
	}
	srv := NewServer(ctl, WithLogger(log), WithSwitches(status...))
	fmt.Fprintf(stdout, "netctl: topology %q (%d nodes, %d links), %s allocation, %d switches, serving on http://%s\n",
		t.Name(), len(t.Nodes()), len(t.Links()), cfg.Alloc.Mode, len(enforcers), ln.Addr())
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, e := range enforcers {
		wg.Add(1)
		go func() { defer wg.Done(); e.Run(runCtx, ctl) }()
	}
	code := serve(ctx, ln, srv, *tick, stderr)
	stopRun()
	wg.Wait()
	clearSwitches(enforcers, stderr)
	return code
}

// clearSwitches takes the controller's drop rules off its switches as it stops, so that a stopped
// controller leaves plain switches rather than its last decisions (the SFU falls back to bwe,
// whose upgrades stale drop rules would eat). A controller that crashes leaves them until the
// next one starts and replaces them.
func clearSwitches(enforcers []*switchctl.Enforcer, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, e := range enforcers {
		if err := e.Clear(ctx); err != nil {
			fmt.Fprintf(stderr, "strata netctl serve: switch %s keeps its rules: %v\n", e.Node(), err)
		}
	}
}

// The switch enforcer also applies the media reservation's meters.
var _ MeterEnforcer = (*switchctl.Enforcer)(nil)

// newEnforcers checks the -switch flags against the topology: one switch per node, on nodes that
// can enforce.
func newEnforcers(t *topo.Topology, switches []switchctl.Config, resync time.Duration, log *slog.Logger) ([]*switchctl.Enforcer, error) {
	seen := map[string]bool{}
	var out []*switchctl.Enforcer
	for _, sc := range switches {
		switch {
		case !t.HasNode(sc.Node):
			return nil, fmt.Errorf("-switch %s: unknown node %q", sc.Target, sc.Node)
		case !t.CanEnforce(sc.Node):
			return nil, fmt.Errorf("-switch %s=%s: node %q is not an enforcer in the topology (enforcer: true)", sc.Node, sc.Target, sc.Node)
		case seen[sc.Node]:
			return nil, fmt.Errorf("-switch: node %q has two switches", sc.Node)
		}
		seen[sc.Node] = true
		sc.Resync, sc.Log = resync, log
		e, err := switchctl.New(sc)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// serve runs the HTTP server and the update tick until ctx ends.
func serve(ctx context.Context, ln net.Listener, srv *Server, tick time.Duration, stderr io.Writer) int {
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	hs.RegisterOnShutdown(srv.Close)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	go srv.Run(runCtx, tick)
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "strata netctl serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "strata netctl serve: shutdown: %v\n", err)
	}
	return 0
}

func agentCmd(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata netctl agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := agent.DefaultConfig()
	fs.StringVar(&cfg.Controller, "controller", "", "controller base URL, e.g. http://10.0.0.1:9080 (required)")
	fs.StringVar(&cfg.Node, "node", "", "this node's name in the controller's topology (required)")
	ifaces := fs.String("interfaces", "", "comma-separated interfaces to report (default: all but lo)")
	fs.DurationVar(&cfg.Interval, "interval", cfg.Interval, "reporting interval")
	fs.StringVar(&cfg.Reader.SysfsRoot, "sysfs", "/sys/class/net", "where interface statistics are")
	fs.StringVar(&cfg.Reader.ProcNetDev, "proc-net-dev", "/proc/net/dev", "fallback when sysfs is missing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.Controller == "" || cfg.Node == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "strata netctl agent: -controller URL and -node NAME are required")
		fs.Usage()
		return 2
	}
	for _, s := range strings.Split(*ifaces, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Interfaces = append(cfg.Interfaces, s)
		}
	}
	a, err := agent.New(cfg, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		fmt.Fprintf(stderr, "strata netctl agent: %v\n", err)
		return 2
	}
	if err := a.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "strata netctl agent: %v\n", err)
		return 1
	}
	return 0
}

func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata netctl check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("topology", "", "topology file to validate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" {
		fmt.Fprintln(stderr, "strata netctl check: -topology FILE is required")
		return 2
	}
	t, err := topo.Load(*file)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: topology %q, %d nodes, %d links\n", *file, t.Name(), len(t.Nodes()), len(t.Links()))
	return 0
}
