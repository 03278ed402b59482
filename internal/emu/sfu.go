package emu

import (
	"path/filepath"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/sfuflow"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// sfuRun is a scenario's SFU (strata serve) with its sessions' publishers
// and subscribers. It runs for the whole scenario; sfuflow starts and stops
// each session at its own times.
type sfuRun struct {
	spec     *scenario.SFU
	duration time.Duration
	sessions *sfuflow.Sessions
	recs     []*recorder // per session, its downlink's endpoint figures
}

func newSFU(s *scenario.Scenario, spec topo.Spec, network *topo.Network, clk clock, opt Options) (*sfuRun, error) {
	u := &sfuRun{spec: s.SFU, duration: s.Duration}
	dir := ""
	if opt.Dir != "" {
		dir = filepath.Join(opt.Dir, "sfu")
	}
	env := sfuflow.Env{SFU: s.SFU, SFUHost: network.Host(sfuHost), Links: spec.Links, Binary: opt.Strata, Dir: dir,
		Clock: clk, Log: opt.Log, LinkLoad: linkLoad(network, s.Interval, clk), Duration: s.Duration, Interval: s.Interval,
		Classes: network.FlowClasses, Switches: sfuflow.SwitchesOf(network)}
	for _, ss := range s.SFU.Sessions {
		rec := newRecorder(clk, bins(s.Duration, s.Interval), s.Interval)
		u.recs = append(u.recs, rec)
		env.Sessions = append(env.Sessions, sfuflow.Session{Name: ss.Name, Pub: network.Host(pubHost(ss.Name)),
			Sub: network.Host(subHost(ss.Name)), Rec: rec})
	}
	var err error
	if u.sessions, err = sfuflow.New(env); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *sfuRun) flowRun() *flowRun {
	return &flowRun{name: "sfu", start: 0, stop: u.duration, flow: u.sessions}
}

// record adds the sessions' downlinks as flows (as the simulator's sessions
// are) with their per-layer counters (the layer plots of seed 000's figures 4
// and 5 are drawn from them), and their per-layer figures.
func (u *sfuRun) record(rec *metrics.Recording, spec topo.Spec, network *topo.Network) {
	layers := u.sessions.Stats()
	for i, ss := range u.spec.Sessions {
		st := network.FlowStats(ss.Name)
		st.Name, st.Kind, st.CC, st.Start, st.Stop = ss.Name, scenario.KindMedia, "sfu/"+u.spec.Policy, ss.Start, ss.Stop
		u.recs[i].fill(st)
		var path []string
		for _, f := range spec.Flows {
			if f.Name == ss.Name {
				path = f.Path
			}
		}
		rec.Flows = append(rec.Flows, metrics.RecordedFlow{Stats: st, Links: linkIndices(spec.Links, path), Session: layers[i]})
	}
	rec.Sessions, rec.Policy = u.sessions.Summaries(), u.spec.Policy
}

// linkLoad is a link's load as the emulator measured it over the last whole
// stats interval: what the SFU's network controller hears, as the
// simulator's link meters tell it.
func linkLoad(network *topo.Network, interval time.Duration, clk endpoint.Clock) func(string) (float64, bool) {
	return func(name string) (float64, bool) {
		b := int(clk.Now()/interval) - 1
		for _, ls := range network.LinkStats() {
			if ls.Name == name && b >= 0 && b < len(ls.Bytes) {
				return float64(ls.Bytes[b]) * 8 / interval.Seconds(), true
			}
		}
		return 0, false
	}
}
