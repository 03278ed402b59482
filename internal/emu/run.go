// Package emu is the lab's emulation engine: it runs a scenario file on real
// network stacks on this machine. Every scenario node is a network
// namespace, every link a user-space link emulator (internal/emu/topo,
// internal/emu/netem), and every flow a real endpoint (kernel TCP, UDP,
// Pion, Chromium, strata serve) in leaf namespaces of its own. Run returns
// the same metrics.Recording the simulator gives, so the lab's metrics,
// CSVs, plots and reports are the same code for both engines.
package emu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

// Options tune an emulation run.
type Options struct {
	// Log takes progress and the endpoints' diagnostics; nil discards them.
	Log io.Writer
	// Strata is the strata binary that SFU scenarios and echotest browser
	// flows run (default: the running executable).
	Strata string
	// Dir, when set, keeps an SFU run's configurations, strata's and the
	// network controller's logs and the controller's state at the end (in
	// Dir/sfu); without it they go to a temporary directory.
	Dir string
}

// errEnd is the cause of the run context's end when the run's duration is
// over (rather than an error or an interrupt).
var errEnd = errors.New("the run's duration is over")

// flowRun is one scheduled set of endpoints: a scenario flow, or an SFU
// with its sessions.
type flowRun struct {
	name        string
	start, stop time.Duration // a flow's start includes its seeded start jitter
	flow        endpoint.Flow
	// spec and rec are a scenario flow's (nil for the SFU).
	spec *scenario.Flow
	rec  *recorder
}

// Run emulates s with the given seed on the real clock and returns its
// recording. It tears everything down (endpoints, namespaces, TUNs) before
// returning, also when ctx is cancelled (the lab cancels it on SIGINT and
// SIGTERM) or a flow fails.
func Run(ctx context.Context, s *scenario.Scenario, seed uint64, opt Options) (rec *metrics.Recording, err error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Strata == "" {
		if opt.Strata, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	if err := CanRun(s); err != nil {
		return nil, err
	}
	spec, err := specOf(s, seed)
	if err != nil {
		return nil, err
	}
	network, err := topo.Build(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := network.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("tearing the network down: %w", cerr)
		}
	}()
	clk := clock{t0: time.Now()}
	network.Start(clk.t0)
	runs, err := newFlows(s, seed, network, clk, opt)
	if err != nil {
		return nil, err
	}
	var sfu *sfuRun
	if s.SFU != nil {
		if sfu, err = newSFU(s, spec, network, clk, opt); err != nil {
			return nil, err
		}
		runs = append(runs, sfu.flowRun())
	}
	if err := schedule(ctx, s.Duration, clk, runs); err != nil {
		return nil, err
	}
	rec = recording(s, seed, spec, network, runs)
	if sfu != nil {
		if err := sfu.sessions.Err(); err != nil {
			return nil, fmt.Errorf("sfu: %w", err)
		}
		sfu.record(rec, spec, network)
	}
	return rec, nil
}

// newFlows builds every flow's endpoints (nothing runs yet).
func newFlows(s *scenario.Scenario, seed uint64, network *topo.Network, clk clock, opt Options) ([]*flowRun, error) {
	n := bins(s.Duration, s.Interval)
	var runs []*flowRun
	for i := range s.Flows {
		f := &s.Flows[i]
		r := &flowRun{name: "flow " + f.Name, start: f.StartAt(seed), stop: f.Stop, spec: f, rec: newRecorder(clk, n, s.Interval)}
		env := endpoint.Env{Spec: *f, Src: network.Host(srcHost(f.Name)), Dst: network.Host(dstHost(f.Name)),
			Rec: r.rec, Clock: clk, Seed: seed, Log: opt.Log}
		fl, err := kinds[f.Kind](env, runInfo{opt: opt, interval: s.Interval})
		if err != nil {
			return nil, err // constructors name the flow themselves
		}
		r.flow = fl
		runs = append(runs, r)
	}
	return runs, nil
}

// schedule starts each flow at its start time and stops it at its stop time
// or at the run's end, whichever comes first. The first flow that fails to
// start or stop ends the run with its error; a cancelled ctx ends it with
// ctx's error. Every flow that started is stopped before schedule returns.
func schedule(ctx context.Context, duration time.Duration, clk clock, runs []*flowRun) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel(err)
	}
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sleepUntil(ctx, clk, r.start) {
				return
			}
			if err := r.flow.Start(ctx); err != nil {
				if context.Cause(ctx) != errEnd {
					fail(fmt.Errorf("%s: start: %w", r.name, err))
				}
				return
			}
			sleepUntil(ctx, clk, r.stop)
			if err := r.flow.Stop(); err != nil {
				fail(fmt.Errorf("%s: stop: %w", r.name, err))
			}
		}()
	}
	if sleepUntil(ctx, clk, duration) {
		cancel(errEnd)
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if cause := context.Cause(ctx); cause != errEnd {
		return fmt.Errorf("emulation interrupted: %w", cause)
	}
	return nil
}

// sleepUntil waits until the run's clock reaches at; false if ctx ended first.
func sleepUntil(ctx context.Context, clk clock, at time.Duration) bool {
	t := time.NewTimer(max(at-clk.Now(), 0))
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// recording gathers the network's figures and the endpoints' into the
// simulator's shape.
func recording(s *scenario.Scenario, seed uint64, spec topo.Spec, network *topo.Network, runs []*flowRun) *metrics.Recording {
	rec := &metrics.Recording{Engine: "emu", Config: sim.Config{Seed: seed, Duration: s.Duration, Interval: s.Interval},
		Links: network.LinkStats()}
	for _, r := range runs {
		if r.spec == nil {
			continue
		}
		st := network.FlowStats(r.spec.Name)
		st.Name, st.Kind, st.CC, st.Start, st.Stop = r.spec.Name, r.spec.Kind, r.spec.CC, r.start, r.spec.Stop
		r.rec.fill(st)
		rf := metrics.RecordedFlow{Stats: st, Links: linkIndices(spec.Links, r.spec.Path)}
		if r.spec.Kind == scenario.KindCBR {
			rf.Demand = r.spec.Rate
		}
		rec.Flows = append(rec.Flows, rf)
	}
	return rec
}
