package metrics

import (
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// Recording is everything a finished run leaves for the metrics, whichever
// engine produced it: the simulator (RecordingOf) or the emulator
// (internal/emu). Summarize, Series and LayerSeriesOf read only this, so
// both engines' figures come from the same code.
type Recording struct {
	// Engine names the engine: "sim" or "emu"; it goes into summary.json.
	Engine string
	Config sim.Config
	// Events is the number of events the simulator handled (0 in emulation).
	Events uint64
	Flows  []RecordedFlow
	// Links are the scenario's links in file order.
	Links []*sim.LinkStats
	// Sessions and Policy are an SFU run's per-layer session figures when
	// the engine counts them itself (the emulator's subscribers count what
	// they receive per simulcast layer); nil means they come from the
	// flows' Session stats.
	Sessions []SessionSummary
	Policy   string
}

// RecordedFlow is one flow's statistics and what the fair-share computation
// needs to know about it.
type RecordedFlow struct {
	Stats *sim.FlowStats
	// Links are the indices (into Recording.Links) of its forward path.
	Links []int
	// Demand is the most it can use in bit/s (cbr flows); 0 means unlimited.
	Demand float64
	// Session holds the per-layer counters of an SFU session; nil for other flows.
	Session *sim.SessionStats
}

// RecordingOf takes the recording of a finished simulation.
func RecordingOf(s *sim.Sim) *Recording {
	links := s.Links()
	rec := &Recording{Engine: "sim", Config: s.Config(), Events: s.Events(), Links: make([]*sim.LinkStats, len(links))}
	index := map[*sim.Link]int{}
	for i, l := range links {
		index[l] = i
		rec.Links[i] = &l.Stats
	}
	for _, f := range s.Flows() {
		st := f.Stats()
		rf := RecordedFlow{Stats: st}
		for _, l := range st.Forward {
			rf.Links = append(rf.Links, index[l])
		}
		switch f := f.(type) {
		case *sim.CBRFlow:
			rf.Demand = f.Rate()
		case *sim.SFUSession:
			rf.Session = f.Layers()
		}
		rec.Flows = append(rec.Flows, rf)
	}
	return rec
}

// sessions returns the recording's SFU sessions' stats and their policy.
func (r *Recording) sessions() ([]*sim.SessionStats, []*sim.FlowStats, string) {
	var out []*sim.SessionStats
	var flows []*sim.FlowStats
	pol := ""
	for _, f := range r.Flows {
		if f.Session != nil {
			out = append(out, f.Session)
			flows = append(flows, f.Stats)
			pol = f.Session.Policy
		}
	}
	return out, flows, pol
}

// intervals is the number of whole or partial intervals inside the run.
func intervals(cfg sim.Config) int {
	n := int(cfg.Duration / cfg.Interval)
	if time.Duration(n)*cfg.Interval < cfg.Duration {
		n++
	}
	return n
}
