package sim

import (
	"fmt"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// NetCtlConfig configures the network controller run inside a simulation.
type NetCtlConfig struct {
	// Controller tunes the controller (the zero value means netctl.DefaultConfig).
	Controller netctl.Config
	// MeterInterval: every link's load is measured over this window and fed to the controller
	// (default 500 ms, rounded to the simulation's interval); UpdateInterval: how often the
	// controller recomputes its decisions (default 250 ms).
	MeterInterval, UpdateInterval time.Duration
	// Enforcers are the nodes that can drop layers (the switches); empty means every node.
	Enforcers []string
}

// DefaultNetCtlConfig returns netctl's defaults with 500 ms meters and 250 ms updates.
func DefaultNetCtlConfig() NetCtlConfig {
	return NetCtlConfig{Controller: netctl.DefaultConfig(), MeterInterval: 500 * time.Millisecond, UpdateInterval: 250 * time.Millisecond}
}

// NetCtl runs a netctl.Controller in simulated time: the topology is the simulation's links (at
// their initial rates), link loads come from the links' meters through the in-process source,
// and Update runs on simulated time. The SFU registers its sessions as streams and subscriptions.
type NetCtl struct {
	sim       *Sim
	cfg       NetCtlConfig
	ctl       *netctl.Controller
	links     []*Link
	decisions map[string]int
	started   bool
}

// NewNetCtl builds the controller from the links added to s so far.
func NewNetCtl(s *Sim, cfg NetCtlConfig) (*NetCtl, error) {
	d := DefaultNetCtlConfig()
	if cfg.Controller == (netctl.Config{}) {
		cfg.Controller = d.Controller
	}
	if cfg.MeterInterval <= 0 {
		cfg.MeterInterval = d.MeterInterval
	}
	cfg.MeterInterval = max(s.cfg.Interval, cfg.MeterInterval.Truncate(s.cfg.Interval))
	if cfg.UpdateInterval <= 0 {
		cfg.UpdateInterval = d.UpdateInterval
	}
	enforcer := map[string]bool{}
	for _, n := range cfg.Enforcers {
		enforcer[n] = true
	}
	var nodes []topo.Node
	seen := map[string]bool{}
	var links []topo.Link
	for _, l := range s.links {
		for _, n := range []string{l.cfg.From, l.cfg.To} {
			if !seen[n] {
				seen[n] = true
				nodes = append(nodes, topo.Node{Name: n, Enforcer: enforcer[n]})
			}
		}
		links = append(links, topo.Link{Name: l.cfg.Name, From: l.cfg.From, To: l.cfg.To,
			Capacity: cc.BitrateFromFloat(l.cfg.Rate.At(0)), Delay: l.cfg.Delay})
	}
	for n := range enforcer {
		if !seen[n] {
			return nil, fmt.Errorf("netctl: enforcer %q is not a node of the simulation", n)
		}
	}
	t, err := topo.New("sim", nodes, links)
	if err != nil {
		return nil, fmt.Errorf("netctl: %w", err)
	}
	ctl, err := netctl.New(t, cfg.Controller)
	if err != nil {
		return nil, err
	}
	return &NetCtl{sim: s, cfg: cfg, ctl: ctl, links: append([]*Link(nil), s.links...), decisions: map[string]int{}}, nil
}

// Controller returns the controller (for its rule table, decisions and link state).
func (n *NetCtl) Controller() *netctl.Controller { return n.ctl }

// Decision returns how many layers the controller allows a subscription, and whether it decided.
func (n *NetCtl) Decision(subscription string) (int, bool) {
	k, ok := n.decisions[subscription]
	return k, ok
}

// register announces a session's stream (from the SFU's node, with its nominal layer rates) and
// its subscription (to the receiver at the end of its downstream path).
func (n *NetCtl) register(sess *SFUSession) error {
	layers := make([]api.Layer, len(sess.cfg.Layers))
	for i, r := range sess.cfg.Layers {
		layers[i] = api.Layer{RateBps: int64(r), Name: fmt.Sprintf("layer%d", i)}
	}
	down := sess.cfg.Down
	path := make([]string, len(down))
	for i, l := range down {
		path[i] = l.cfg.Name
	}
	if err := n.ctl.PutStream(api.Stream{ID: sess.cfg.Name, Source: down[0].cfg.From, Layers: layers}); err != nil {
		return fmt.Errorf("sfu session %s: %w", sess.cfg.Name, err)
	}
	err := n.ctl.PutSubscription(api.Subscription{ID: sess.cfg.Name, Stream: sess.cfg.Name, Receiver: down[len(down)-1].cfg.To, Path: path})
	if err != nil {
		return fmt.Errorf("sfu session %s: %w", sess.cfg.Name, err)
	}
	return nil
}

const (
	evNetMeter int32 = iota + 1
	evNetUpdate
)

func (n *NetCtl) start() {
	if n.started {
		return
	}
	n.started = true
	n.apply(n.ctl.Update(0))
	n.sim.Schedule(n.cfg.MeterInterval, n, evNetMeter, 0, nil)
	n.sim.Schedule(n.cfg.UpdateInterval, n, evNetUpdate, 0, nil)
}

// HandleEvent measures the links or updates the decisions.
func (n *NetCtl) HandleEvent(ev Event) {
	switch ev.Kind {
	case evNetMeter:
		n.meter(ev.At)
		n.sim.Schedule(ev.At+n.cfg.MeterInterval, n, evNetMeter, 0, nil)
	case evNetUpdate:
		n.apply(n.ctl.Update(ev.At))
		n.sim.Schedule(ev.At+n.cfg.UpdateInterval, n, evNetUpdate, 0, nil)
	}
}

// meter feeds every link's load over the last MeterInterval: the bytes whose transmission ended
// in the completed intervals of that window, as an interface counter would count them.
func (n *NetCtl) meter(now time.Duration) {
	s := n.sim
	to := s.bin(now)
	from := max(0, s.bin(now-n.cfg.MeterInterval))
	if to <= from {
		return
	}
	window := time.Duration(to-from) * s.cfg.Interval
	for _, l := range n.links {
		var bytes int64
		for b := from; b < to; b++ {
			bytes += l.Stats.Bytes[b]
		}
		_ = n.ctl.SetLinkLoad(l.cfg.Name, cc.BitrateFromFloat(float64(bytes*8)/window.Seconds()), now)
	}
}

func (n *NetCtl) apply(changed []api.Decision) {
	for _, d := range changed {
		n.decisions[d.Subscription] = d.Layers
	}
}
