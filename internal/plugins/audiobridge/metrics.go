package audiobridge

import (
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
)

// MixerTotals are the mixers' counters summed over every room since the plugin started (a room's
// own counters, in handle_info, go with it), for the metrics.
type MixerTotals struct {
	// Running is the number of mixer goroutines (rooms with members, forwarders or files).
	Running int64
	// Ticks are the periods mixed; Late those that began over a period late; Skipped those
	// left out to catch up.
	Ticks, Late, Skipped uint64
	// Encodings are the Opus frames encoded.
	Encodings uint64
	// Busy is the time spent mixing, encoding and sending: its rate over the number of mixers is
	// the mixers' load (1 would be a mixer that never sleeps).
	Busy time.Duration
}

// mixTotals are the plugin-wide counterparts of mixStats, updated once per tick (not per packet).
type mixTotals struct {
	running                               atomic.Int64
	ticks, late, skipped, encodings, busy atomic.Uint64
}

// MixerTotals returns the mixers' counters.
func (p *Plugin) MixerTotals() MixerTotals {
	t := &p.mix
	return MixerTotals{
		Running: t.running.Load(), Ticks: t.ticks.Load(), Late: t.late.Load(), Skipped: t.skipped.Load(),
		Encodings: t.encodings.Load(), Busy: time.Duration(t.busy.Load()),
	}
}

// Counts implements plugin.Counter: the rooms and their participants.
func (p *Plugin) Counts() plugin.Counts {
	p.mu.Lock()
	rooms := slices.Collect(maps.Values(p.rooms))
	p.mu.Unlock()
	c := plugin.Counts{Rooms: len(rooms)}
	for _, r := range rooms {
		r.mu.Lock()
		c.Participants += len(r.members)
		r.mu.Unlock()
	}
	return c
}
