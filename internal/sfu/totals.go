package sfu

import "sync/atomic"

// Totals count, over the whole process, the SFU's decisions: layer switches the subscribers saw
// and the allocators' target changes. They are rare next to packets (at most a few a second per
// subscriber), so one shared atomic each costs nothing on the media path; they are process-wide
// rather than per plugin because every plugin's DownTracks and Allocators count alike, and a
// process runs one server. The Prometheus metrics read them.
type Totals struct {
	// SwitchesUp and SwitchesDown are the layer changes of every DownTrack, as forwarded.
	SwitchesUp, SwitchesDown uint64
	// DecisionsUp, DecisionsDown and DecisionsPause are the allocators' target changes: to a
	// higher layer, a lower one, or none (the track paused for want of bandwidth).
	DecisionsUp, DecisionsDown, DecisionsPause uint64
}

var totals struct {
	switchesUp, switchesDown                   atomic.Uint64
	decisionsUp, decisionsDown, decisionsPause atomic.Uint64
}

// ReadTotals returns the process-wide counters.
func ReadTotals() Totals {
	return Totals{
		SwitchesUp: totals.switchesUp.Load(), SwitchesDown: totals.switchesDown.Load(),
		DecisionsUp: totals.decisionsUp.Load(), DecisionsDown: totals.decisionsDown.Load(),
		DecisionsPause: totals.decisionsPause.Load(),
	}
}

func countSwitch(from, to Layer) {
	if to.Less(from) {
		totals.switchesDown.Add(1)
	} else {
		totals.switchesUp.Add(1)
	}
}

func countDecision(from, to Layer) {
	switch {
	case to.Spatial < 0:
		totals.decisionsPause.Add(1)
	case to.Less(from):
		totals.decisionsDown.Add(1)
	default:
		totals.decisionsUp.Add(1)
	}
}
