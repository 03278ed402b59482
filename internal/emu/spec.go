package emu

import (
	"fmt"
	"slices"
	"time"

	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

// Host names: a flow's endpoints are "<flow>-src" and "<flow>-dst"; an SFU
// run has the host "sfu" on the SFU's node and per session
// "<session>-pub" (the path's first node) and "<session>-sub" (its last).
func srcHost(flow string) string    { return flow + "-src" }
func dstHost(flow string) string    { return flow + "-dst" }
func pubHost(session string) string { return session + "-pub" }
func subHost(session string) string { return session + "-sub" }

const sfuHost = "sfu"

// upFlow names the network flow of a session's publisher → SFU leg; the
// session's own name is its SFU → subscriber leg, the one the simulator's
// session stats describe.
func upFlow(session string) string { return session + "-up" }

// specOf is the network a scenario needs.
func specOf(s *scenario.Scenario, seed uint64) (topo.Spec, error) {
	spec := topo.Spec{Interval: s.Interval, Duration: s.Duration, Seed: seed}
	for _, l := range s.Links {
		spec.Links = append(spec.Links, l.LinkConfig)
		if l.Switch == scenario.SwitchOVS {
			spec.Switched = append(spec.Switched, l.Name)
		}
	}
	for _, f := range s.Flows {
		if len(f.Path) < 2 {
			return spec, fmt.Errorf("flow %s: a path needs at least two nodes", f.Name)
		}
		spec.Hosts = append(spec.Hosts, topo.HostSpec{Name: srcHost(f.Name), Node: f.Path[0]},
			topo.HostSpec{Name: dstHost(f.Name), Node: f.Path[len(f.Path)-1]})
		spec.Flows = append(spec.Flows, topo.FlowSpec{Name: f.Name, Src: srcHost(f.Name), Dst: dstHost(f.Name),
			Kind: f.Kind, CC: f.CC, Path: f.Path, ReversePath: f.ReversePath})
	}
	if u := s.SFU; u != nil {
		spec.Hosts = append(spec.Hosts, topo.HostSpec{Name: sfuHost, Node: u.Node})
		for _, ss := range u.Sessions {
			at := slices.Index(ss.Path, u.Node)
			if at <= 0 || at == len(ss.Path)-1 {
				return spec, fmt.Errorf("sfu session %s: the path must pass through the SFU's node %s", ss.Name, u.Node)
			}
			up, down := ss.Path[:at+1], ss.Path[at:]
			spec.Hosts = append(spec.Hosts, topo.HostSpec{Name: pubHost(ss.Name), Node: ss.Path[0]},
				topo.HostSpec{Name: subHost(ss.Name), Node: ss.Path[len(ss.Path)-1]})
			spec.Flows = append(spec.Flows,
				topo.FlowSpec{Name: upFlow(ss.Name), Src: pubHost(ss.Name), Dst: sfuHost, Path: up, ReversePath: reversed(up)},
				topo.FlowSpec{Name: ss.Name, Src: sfuHost, Dst: subHost(ss.Name), Path: down, ReversePath: reversed(down)})
		}
	}
	return spec, nil
}

func reversed(p []string) []string {
	out := slices.Clone(p)
	slices.Reverse(out)
	return out
}

// linkIndices maps a node path onto the indices of the links joining its
// consecutive nodes (as sim.Path does).
func linkIndices(links []sim.LinkConfig, path []string) []int {
	var out []int
	for i := 0; i+1 < len(path); i++ {
		for j, l := range links {
			if l.From == path[i] && l.To == path[i+1] {
				out = append(out, j)
				break
			}
		}
	}
	return out
}

// bins is the number of stats intervals of a run, counted as the simulator
// does (one more than whole intervals: late events land in the last).
func bins(d, interval time.Duration) int { return int(d/interval) + 1 }
