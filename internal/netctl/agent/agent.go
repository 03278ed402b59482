// Package agent is the network controller's link-state agent (strata netctl agent): on a node of
// the network it reads the byte counters of the node's interfaces every interval and posts their
// rates to the controller, which maps them to links through the topology (a link's interface and
// peer_interface).
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/client"
)

// Config configures an agent.
type Config struct {
	// Controller is the controller's base URL, e.g. http://10.0.0.1:9080.
	Controller string
	// Node is this node's name in the controller's topology.
	Node string
	// Interfaces to report; empty means every interface but lo.
	Interfaces []string
	// Interval between reports.
	Interval time.Duration
	// Reader says where the counters are (the defaults suit Linux).
	Reader Reader
}

// DefaultConfig returns a configuration with a 1 s interval.
func DefaultConfig() Config { return Config{Interval: time.Second} }

// Agent reports interface rates to a controller.
type Agent struct {
	cfg    Config
	client *client.Client
	log    *slog.Logger
}

// New checks the configuration and returns an agent; log may be nil.
func New(cfg Config, log *slog.Logger) (*Agent, error) {
	if cfg.Node == "" {
		return nil, errors.New("agent: the node name is required")
	}
	if cfg.Interval <= 0 {
		return nil, fmt.Errorf("agent: interval must be positive, got %v", cfg.Interval)
	}
	c, err := client.New(cfg.Controller, client.WithTimeout(max(cfg.Interval, time.Second)))
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Agent{cfg: cfg, client: c, log: log}, nil
}

// Run reports every interval until ctx ends. It fails at once if the interfaces cannot be read;
// a controller that does not answer is logged and retried at the next interval.
func (a *Agent) Run(ctx context.Context) error {
	prev, err := a.cfg.Reader.Read(a.cfg.Interfaces)
	if err != nil {
		return fmt.Errorf("agent: %v", err)
	}
	prevAt := time.Now()
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cur, err := a.cfg.Reader.Read(a.cfg.Interfaces)
		now := time.Now()
		if err != nil {
			a.log.Warn("netctl agent: cannot read counters", "err", err)
			continue
		}
		rep := a.report(Rates(prev, cur, now.Sub(prevAt)), now.Sub(prevAt))
		prev, prevAt = cur, now
		res, err := a.client.Report(ctx, rep)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			if !failing {
				a.log.Warn("netctl agent: report failed (will keep trying)", "err", err)
			}
			failing = true
		default:
			if failing || len(res.Unmapped) > 0 {
				a.log.Info("netctl agent: reporting", "links", res.Mapped, "unmapped interfaces", res.Unmapped)
			}
			failing = false
		}
	}
}

// report builds the report of one interval, interfaces sorted by name.
func (a *Agent) report(rates map[string][2]cc.Bitrate, dt time.Duration) api.Report {
	rep := api.Report{Node: a.cfg.Node, IntervalMs: dt.Milliseconds(), Interfaces: []api.InterfaceReport{}}
	for name, r := range rates {
		rep.Interfaces = append(rep.Interfaces, api.InterfaceReport{Name: name, TxBps: int64(r[0]), RxBps: int64(r[1])})
	}
	sort.Slice(rep.Interfaces, func(i, j int) bool { return rep.Interfaces[i].Name < rep.Interfaces[j].Name })
	return rep
}
