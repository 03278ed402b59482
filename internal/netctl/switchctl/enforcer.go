// Package switchctl enforces netctl's drop rules on a real OpenFlow switch (Open vSwitch, through
// ovs-ofctl and the bridge's management socket): one Enforcer per switch, each with a worker
// goroutine that installs the latest rule set, checks the switch's flows every Resync interval and
// reinstalls them when they differ (a restarted switch, flows deleted by hand), and acknowledges
// what the switch holds to the controller, which marks the decisions Enforced.
//
// It is a package of its own, beside the controller, so that the controller stays free of
// processes, sockets and clocks: it only sees ApplyRules (the Enforcer interface) and
// SetEnforced.
package switchctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/ovs"
)

// Config is one switch.
type Config struct {
	// Node is the topology node the switch enforces for (an enforcer node).
	Node string
	// Target is the switch's OpenFlow management socket as ovs-ofctl takes it
	// ("unix:/path/br0.mgmt").
	Target string
	// Resync is how often the switch's flows are checked (default 1 s).
	Resync time.Duration
	// Timeout bounds each ovs-ofctl call (default 2 s).
	Timeout time.Duration
	// Unixctl is ovs-vswitchd's control socket. The enforcer acknowledges a rule set only once the
	// datapath's caches have it (ovs-appctl revalidator/wait), so that Enforced never runs ahead of
	// the packets. Empty: DIR/ovs-vswitchd.ctl beside the target's DIR/BRIDGE.mgmt if it exists
	// (where package ovs puts it), else acknowledge when ovs-ofctl returns.
	Unixctl string
	// Log gets the switch's state changes (default: discard).
	Log *slog.Logger
}

// Acknowledger receives what a switch holds: the controller's SetEnforced.
type Acknowledger interface {
	SetEnforced(node string, installed []api.Rule, err error)
}

// Enforcer programs one switch. ApplyRules only records the rule set and wakes the worker (Run),
// so it never blocks the controller; when rule sets come faster than the switch takes them, only
// the latest is installed.
type Enforcer struct {
	cfg    Config
	client *ovs.Client
	kick   chan struct{}

	mu      sync.Mutex
	rules   []api.Rule
	version uint64
	st      api.Switch
}

// New returns the enforcer of one switch; Run starts it.
func New(cfg Config) (*Enforcer, error) {
	if cfg.Node == "" || cfg.Target == "" {
		return nil, errors.New("switchctl: a switch needs a node and a target")
	}
	if cfg.Resync <= 0 {
		cfg.Resync = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Unixctl == "" {
		cfg.Unixctl = unixctlBeside(cfg.Target)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := ovs.NewClient(cfg.Target)
	c.Timeout, c.Unixctl = cfg.Timeout, cfg.Unixctl
	return &Enforcer{
		cfg: cfg, client: c, kick: make(chan struct{}, 1),
		st: api.Switch{Node: cfg.Node, Target: cfg.Target, Bridge: bridgeOf(cfg.Target), State: api.SwitchPending, Flows: []api.SwitchFlow{}},
	}, nil
}

// bridgeOf guesses the bridge's name from its management socket (DIR/BRIDGE.mgmt).
func bridgeOf(target string) string {
	if p, ok := strings.CutPrefix(target, "unix:"); ok && strings.HasSuffix(p, ".mgmt") {
		return strings.TrimSuffix(filepath.Base(p), ".mgmt")
	}
	return ""
}

// unixctlBeside finds ovs-vswitchd's control socket next to a unix:DIR/BRIDGE.mgmt target.
func unixctlBeside(target string) string {
	p, ok := strings.CutPrefix(target, "unix:")
	if !ok {
		return ""
	}
	ctl := filepath.Join(filepath.Dir(p), "ovs-vswitchd.ctl")
	if _, err := os.Stat(ctl); err != nil {
		return ""
	}
	return ctl
}

// Node is the node the enforcer enforces for.
func (e *Enforcer) Node() string { return e.cfg.Node }

// ApplyRules implements netctl.Enforcer: it keeps node's latest rule set (other nodes' are not
// this switch's) and wakes the worker.
func (e *Enforcer) ApplyRules(node string, rules []api.Rule) {
	if node != e.cfg.Node {
		return
	}
	e.mu.Lock()
	e.rules, e.version = slices.Clone(rules), e.version+1
	e.st.RulesVersion = e.version
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Status returns the switch's state (GET /v1/switches).
func (e *Enforcer) Status() api.Switch {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.st
	st.Unenforceable = slices.Clone(st.Unenforceable)
	st.Flows = slices.Clone(st.Flows)
	return st
}

// worker is Run's own state.
type worker struct {
	ack    Acknowledger
	table  *table // what the switch holds, nil until an install succeeded
	failed bool   // the last install or check failed: install again at the next chance
}

// Run installs the current rule set at once (an empty one when the controller has just started:
// the switch then forwards everything, and stale rules of an earlier controller are gone), then
// installs every new rule set and checks the switch every Resync interval, until ctx ends.
func (e *Enforcer) Run(ctx context.Context, ack Acknowledger) {
	w := &worker{ack: ack}
	e.step(ctx, w, false)
	t := time.NewTicker(e.cfg.Resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.kick:
			e.step(ctx, w, false)
		case <-t.C:
			e.step(ctx, w, true)
		}
	}
}

// step installs the latest rule set when the switch does not hold it (or the last attempt
// failed); with check, it also compares the switch's flows with the table and reinstalls on any
// difference.
func (e *Enforcer) step(ctx context.Context, w *worker, check bool) {
	e.mu.Lock()
	rules, version := e.rules, e.version
	e.mu.Unlock()
	if w.table == nil || w.failed || w.table.version != version {
		e.install(ctx, w, rules, version)
		return
	}
	if !check {
		return
	}
	dump, err := e.client.DumpFlows(ctx)
	if err != nil {
		e.failed(w, err)
		return
	}
	if !w.table.matches(dump) {
		e.install(ctx, w, rules, version)
		return
	}
	e.mu.Lock()
	e.st.Flows, e.st.CheckedAt = w.table.counters(dump), time.Now()
	e.mu.Unlock()
}

// install replaces strata's flows on the switch with the rule set's, in one atomic bundle.
func (e *Enforcer) install(ctx context.Context, w *worker, rules []api.Rule, version uint64) {
	t, err := translate(rules, version)
	if err == nil {
		err = t.install(ctx, e.client)
	}
	if err != nil {
		e.failed(w, err)
		return
	}
	// The same rule set again: the switch lost the flows (a restart, an outage, a hand edit).
	reinstall := w.table != nil && w.table.version == version
	w.table, w.failed = t, false
	now := time.Now()
	e.mu.Lock()
	if reinstall {
		e.st.Resyncs++
	}
	if e.st.State != api.SwitchOK || reinstall {
		e.cfg.Log.Info("netctl: switch rules installed", "node", e.cfg.Node, "version", version, "rules", len(t.installed), "reinstall", reinstall)
	}
	e.st.State, e.st.Error = api.SwitchOK, ""
	e.st.InstalledVersion, e.st.InstalledAt, e.st.CheckedAt = version, now, now
	e.st.Rules, e.st.Unenforceable = len(t.installed), t.unenforceable
	e.st.Flows = t.counters(nil)
	e.mu.Unlock()
	w.ack.SetEnforced(e.cfg.Node, t.installed, nil)
}

// failed records an unreachable or refusing switch and withdraws the acknowledgement.
func (e *Enforcer) failed(w *worker, err error) {
	state := api.SwitchUnreachable
	if ovs.IsRefused(err) || !isCallError(err) {
		state = api.SwitchRefused // the switch said no, or the rule set could not be translated
	}
	w.failed = true
	e.mu.Lock()
	if e.st.State != state || e.st.Error != err.Error() {
		e.cfg.Log.Warn("netctl: switch "+state, "node", e.cfg.Node, "err", err)
	}
	e.st.State, e.st.Error = state, err.Error()
	e.mu.Unlock()
	w.ack.SetEnforced(e.cfg.Node, nil, fmt.Errorf("switch %s (%s): %s: %w", e.cfg.Node, e.cfg.Target, state, err))
}

// Clear takes the enforcer's flows off the switch, leaving the base NORMAL flow: for a clean
// shutdown, once Run has returned.
func (e *Enforcer) Clear(ctx context.Context) error {
	t, err := translate(nil, 0)
	if err != nil {
		return err
	}
	return t.install(ctx, e.client)
}

// Install replaces strata's flows on the switch at target with the rules' once, without an
// enforcer (tools, benchmarks); flows of others stay.
func Install(ctx context.Context, target string, rules []api.Rule) error {
	t, err := translate(rules, 0)
	if err != nil {
		return err
	}
	c := ovs.NewClient(target)
	c.Unixctl = unixctlBeside(target)
	return t.install(ctx, c)
}

func isCallError(err error) bool {
	var e *ovs.Error
	return errors.As(err, &e)
}
