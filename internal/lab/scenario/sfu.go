package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/sfu/policy"
	"github.com/strata-rtc/strata/internal/sim"
)

// SFU is a scenario's SFU node (seed 000): layered sessions forwarded through it under a layer
// policy, optionally with the network controller and a switch at the SFU's node.
//
//	sfu:
//	  node: paris
//	  policy: network          # probe, network, bwe or hybrid
//	  netctl: auto             # on, off, or auto (on for network and hybrid), or a mapping:
//	                           # {use: auto, reserve: 80%} (media reservation, netctl -reserve)
//	  sessions:
//	    - {name: s, count: 5, start_step: 700ms, layers: [0.6Mbps, 0.6Mbps, 1.2Mbps],
//	       path: [london, paris, madrid], codec: {model: statistical, keyframe_interval: 3s},
//	       subscriber: pion}   # or browser: headless Chromium (emulation only)
type SFU struct {
	Node   string
	Policy string
	NetCtl bool
	// Reserve is the controller's media reservation (netctl -reserve; 0: none).
	Reserve  float64
	Sessions []SFUSession
	Line     int
}

// SFUSession is one session of the SFU: its path runs from the sender through the SFU's node to
// the receiver; the feedback path is the reverse.
type SFUSession struct {
	Name        string
	Group       string
	Layers      []float64
	Codec       sim.CodecConfig
	Path        []string
	Start, Stop time.Duration
	// Subscriber is what receives the session in emulation: SubscriberPion or SubscriberBrowser.
	Subscriber string
	// Layering is what the session's publisher sends in emulation: LayeringSimulcast (one
	// encoding per cumulative layer rate) or LayeringTemporal (one VP8 stream of up to three
	// temporal layers, one per layer rate). The simulator's sessions are cumulative layers either
	// way.
	Layering string
	Line     int
}

// Layerings of an SFU session's publisher in emulation.
const (
	LayeringSimulcast = "simulcast" // VP8 simulcast: encoding k at the sum of the first k rates
	LayeringTemporal  = "temporal"  // one VP8 stream, TL0 (TL1, TL2) at the layer rates
)

// Subscribers of an SFU session in emulation.
const (
	SubscriberPion    = "pion"    // a Pion PeerConnection counting every packet
	SubscriberBrowser = "browser" // headless Chromium through janus.js, read with getStats
)

// ErrBrowserSubscriberNeedsEmulation is what the simulator says about a browser subscriber.
var ErrBrowserSubscriberNeedsEmulation = errors.New("browser subscribers run only in emulation: strata lab run --engine emu")

func decodeSFU(d *decoder, n *yaml.Node, s *Scenario) *SFU {
	u := &SFU{Line: n.Line, Policy: policy.NameBWE}
	netctl := "auto"
	var sessions *yaml.Node
	d.Mapping(n, "sfu", map[string]fieldFn{
		"node":     func(v *yaml.Node, f string) { d.Str(v, f, &u.Node) },
		"policy":   func(v *yaml.Node, f string) { d.Str(v, f, &u.Policy) },
		"netctl":   func(v *yaml.Node, f string) { d.netctl(v, f, &netctl, &u.Reserve) },
		"sessions": func(v *yaml.Node, f string) { sessions = v },
	})
	if !slices.Contains(policy.Names(), u.Policy) {
		d.Failf(n, "sfu.policy", "unknown policy %q (want one of %s)", u.Policy, strings.Join(policy.Names(), ", "))
	}
	switch netctl {
	case "auto":
		u.NetCtl = u.Policy == policy.NameNetwork || u.Policy == policy.NameHybrid
	case "on", "true":
		u.NetCtl = true
	case "off", "false":
	default:
		d.Failf(n, "sfu.netctl", "want on, off or auto, not %q", netctl)
	}
	if u.Node == "" {
		d.Failf(n, "sfu.node", "the SFU needs a node")
	}
	if sessions == nil {
		d.Failf(n, "sfu.sessions", "the SFU needs sessions")
		return u
	}
	d.Sequence(sessions, "sfu.sessions", func(v *yaml.Node, field string, _ int) {
		u.Sessions = append(u.Sessions, decodeSFUSession(d, v, field, s)...)
	})
	return u
}

// netctl decodes the SFU's controller: "auto", "on" or "off", or a mapping with use (the same) and
// the controller's options.
func (d *decoder) netctl(n *yaml.Node, field string, use *string, reserve *float64) {
	if n == nil || n.Kind != yaml.MappingNode {
		d.Str(n, field, use)
		return
	}
	d.Mapping(n, field, map[string]fieldFn{
		"use": func(v *yaml.Node, f string) { d.Str(v, f, use) },
		"reserve": func(v *yaml.Node, f string) {
			if d.Probability(v, f, reserve); *reserve >= 1 {
				d.Failf(v, f, "the reservation must leave background traffic something: below 100%%")
			}
		},
	})
}

// sessionCodec decodes a session's frame model: the simulator's models only, since the SFU's
// sessions run in the simulator alone.
func (d *decoder) sessionCodec(n *yaml.Node, field string, c *sim.CodecConfig) {
	if d.codec(n, field, c); c.Model == sim.ModelLibvpx {
		d.Failf(n, field, "codec model libvpx is for media flows, not SFU sessions")
	}
}

func decodeSFUSession(d *decoder, v *yaml.Node, field string, s *Scenario) []SFUSession {
	ss := SFUSession{Stop: s.Duration, Codec: sim.DefaultCodecConfig(), Subscriber: SubscriberPion, Layering: LayeringSimulcast, Line: v.Line}
	if name := nameOf(v); name != "" {
		field = "sfu.sessions[" + name + "]"
	}
	count := 1
	var startStep time.Duration
	d.Mapping(v, field, map[string]fieldFn{
		"name":       func(v *yaml.Node, f string) { d.Str(v, f, &ss.Name) },
		"count":      func(v *yaml.Node, f string) { d.Integer(v, f, 1, 100, &count) },
		"layers":     func(v *yaml.Node, f string) { ss.Layers = d.rates(v, f) },
		"codec":      func(v *yaml.Node, f string) { d.sessionCodec(v, f, &ss.Codec) },
		"path":       func(v *yaml.Node, f string) { d.StrList(v, f, &ss.Path) },
		"start":      func(v *yaml.Node, f string) { d.Duration(v, f, &ss.Start) },
		"stop":       func(v *yaml.Node, f string) { d.Duration(v, f, &ss.Stop) },
		"start_step": func(v *yaml.Node, f string) { d.Duration(v, f, &startStep) },
		"subscriber": func(v *yaml.Node, f string) {
			d.Str(v, f, &ss.Subscriber)
			if ss.Subscriber != SubscriberPion && ss.Subscriber != SubscriberBrowser {
				d.Failf(v, f, "unknown subscriber %q (pion or browser)", ss.Subscriber)
			}
		},
		"layering": func(v *yaml.Node, f string) {
			d.Str(v, f, &ss.Layering)
			if ss.Layering != LayeringSimulcast && ss.Layering != LayeringTemporal {
				d.Failf(v, f, "unknown layering %q (simulcast or temporal)", ss.Layering)
			}
		},
	})
	if ss.Name == "" {
		d.Failf(v, field+".name", "a session needs a name")
	}
	if len(ss.Layers) == 0 || len(ss.Layers) > 3 {
		d.Failf(v, field+".layers", "want 1 to 3 layer rates (base, spatial, temporal)")
	}
	if ss.Layering == LayeringTemporal && ss.Subscriber == SubscriberBrowser {
		d.Failf(v, field+".layering", "temporal layering is counted per TID by a pion subscriber, not a browser")
	}
	ss.Group = ss.Name
	if count == 1 {
		return []SFUSession{ss}
	}
	out := make([]SFUSession, count)
	for i := range out {
		out[i] = ss
		out[i].Name = fmt.Sprintf("%s-%d", ss.Name, i+1)
		out[i].Start = ss.Start + time.Duration(i)*startStep
	}
	return out
}

// validateSFU checks the sessions' paths: over existing links, through the SFU's node.
func validateSFU(d *decoder, s *Scenario, between map[[2]string]bool, names map[string]bool) {
	u := s.SFU
	for _, ss := range u.Sessions {
		field := "sfu.sessions[" + ss.Group + "]"
		if names[ss.Name] {
			d.FailLine(ss.Line, field+".name", "duplicate flow or session name %q", ss.Name)
		}
		names[ss.Name] = true
		at := slices.Index(ss.Path, u.Node)
		if at <= 0 || at == len(ss.Path)-1 {
			d.FailLine(ss.Line, field+".path", "the path must run from a sender through the SFU node %s to a receiver", u.Node)
			continue
		}
		full := append(slices.Clone(ss.Path), reversed(ss.Path[at:])[1:]...)
		for j := 0; j+1 < len(full); j++ {
			if !between[[2]string{full[j], full[j+1]}] {
				d.FailLine(ss.Line, field+".path", "no link from %s to %s (the receiver's feedback goes back to the SFU: make the links duplex)", full[j], full[j+1])
				break
			}
		}
		if ss.Stop > s.Duration || ss.Start >= ss.Stop {
			d.FailLine(ss.Line, field+".start", "start %v and stop %v must lie within the run (%v)", ss.Start, ss.Stop, s.Duration)
		}
	}
}

// NeedsEmulation says which session the simulator cannot run (nil if it can run them all).
func (u *SFU) NeedsEmulation() error {
	for _, ss := range u.Sessions {
		if ss.Subscriber == SubscriberBrowser {
			return fmt.Errorf("session %s: %w", ss.Name, ErrBrowserSubscriberNeedsEmulation)
		}
	}
	return nil
}

// netCtl is the simulation's controller: netctl's defaults with the scenario's options, the SFU's
// node the enforcer.
func (u *SFU) netCtl(sm *sim.Sim) (*sim.NetCtl, error) {
	c := netctl.DefaultConfig()
	c.Reserve = u.Reserve
	return sim.NewNetCtl(sm, sim.NetCtlConfig{Controller: c, Enforcers: []string{u.Node}})
}

// buildSFU adds the SFU node, its sessions and, if asked, the controller and switch.
func (s *Scenario) buildSFU(sm *sim.Sim) error {
	u := s.SFU
	if err := u.NeedsEmulation(); err != nil {
		return err
	}
	cfg := sim.SFUConfig{Node: u.Node, Policy: u.Policy, PolicyConfig: policy.DefaultConfig()}
	if u.NetCtl {
		nc, err := u.netCtl(sm)
		if err != nil {
			return err
		}
		cfg.Net, cfg.Switch = nc, sim.NewSwitch(u.Node, nc.Controller().Rules())
		if u.Reserve > 0 {
			for _, l := range sm.Links() {
				if l.Config().From != u.Node {
					continue
				}
				if _, err := cfg.Switch.Police(l); err != nil {
					return err
				}
			}
		}
	}
	node, err := sim.NewSFU(sm, cfg)
	if err != nil {
		return err
	}
	for _, ss := range u.Sessions {
		at := slices.Index(ss.Path, u.Node)
		up, err := sm.Path(ss.Path[:at+1])
		if err != nil {
			return err
		}
		down, err := sm.Path(ss.Path[at:])
		if err != nil {
			return err
		}
		rev, err := sm.Path(reversed(ss.Path[at:]))
		if err != nil {
			return err
		}
		if _, err := node.AddSession(sim.SFUSessionConfig{Name: ss.Name, Layers: ss.Layers, Codec: ss.Codec,
			Up: up, Down: down, Reverse: rev, Start: ss.Start, Stop: ss.Stop}); err != nil {
			return err
		}
	}
	return nil
}
