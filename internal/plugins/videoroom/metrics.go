package videoroom

import (
	"maps"
	"slices"

	"github.com/strata-rtc/strata/internal/plugin"
)

// Counts implements plugin.Counter: rooms, participants, those publishing, and subscriptions.
// Each lock is taken alone (plugin, room, publisher), so a scrape never nests them.
func (p *Plugin) Counts() plugin.Counts {
	p.mu.Lock()
	rooms := slices.Collect(maps.Values(p.rooms))
	p.mu.Unlock()
	c := plugin.Counts{Rooms: len(rooms)}
	for _, r := range rooms {
		r.mu.Lock()
		c.Subscribers += r.subscriptions
		r.mu.Unlock()
		members := r.members()
		c.Participants += len(members)
		for _, pub := range members {
			if pub.isActive() {
				c.Publishers++
			}
		}
	}
	return c
}
