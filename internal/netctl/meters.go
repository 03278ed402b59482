package netctl

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/alloc"
	"github.com/strata-rtc/strata/internal/netctl/api"
)

// MeterEnforcer is an Enforcer that can also police the non-media traffic entering a link (the
// media reservation, Config.Reserve). ApplyMeters replaces a node's complete meter set (empty: no
// policing); like ApplyRules it is called from Update and must not call back into the controller.
type MeterEnforcer interface {
	ApplyMeters(node string, meters []api.Meter)
}

// reserve is the reservation that applies to link i (0 where no switch can enforce it).
func (c *Controller) reserve(i int) float64 {
	if c.reservable[i] {
		return c.cfg.Reserve
	}
	return 0
}

// computeMeters works out, for every reservable link that carries managed streams, the rate the
// switch at its source lets non-media traffic in (alloc.MeterRate over what the controller
// attributes to the streams after this step's decisions, or their granted layers' peak if that is
// higher), and returns the nodes' sets that changed.
func (c *Controller) computeMeters(now time.Duration) map[string][]api.Meter {
	if c.cfg.Reserve <= 0 {
		return nil
	}
	links := c.topo.Links()
	for i := range c.links {
		c.links[i].media = 0
	}
	for _, sub := range c.order {
		r := max(c.attributed(sub, now), rateOf(c.demandRates(sub), sub.state.Layers))
		for _, li := range sub.path {
			c.links[li].media += r
		}
	}
	next := map[string][]api.Meter{}
	for i, l := range links {
		if !c.reservable[i] || c.links[i].subs == 0 {
			c.meterSince[i] = -1
			continue
		}
		if c.meterSince[i] < 0 {
			c.meterSince[i] = now
		}
		v := &c.links[i]
		rate := alloc.MeterRate(v.capacity, v.media, c.cfg.Alloc.Margin, c.cfg.Reserve)
		rate = alloc.MeterOpening(rate, v.capacity, c.cfg.Reserve, now-c.meterSince[i], c.cfg.MeterRise)
		next[l.From] = append(next[l.From], api.Meter{Link: l.Name, Interface: l.Interface, RateBps: int64(rate), BurstBits: c.cfg.MeterBurst})
	}
	for _, m := range next {
		slices.SortFunc(m, func(a, b api.Meter) int { return strings.Compare(a.Link, b.Link) })
	}
	changes := changedNodes(next, c.nodeMeters, slices.Equal[[]api.Meter])
	c.nodeMeters = next
	return changes
}

// applyMeters hands changed meter sets to the rule table and the enforcers that police.
func (c *Controller) applyMeters(changes map[string][]api.Meter, enforcers []Enforcer) {
	for _, n := range sortedKeys(changes) {
		c.rules.ApplyMeters(n, changes[n])
		for _, e := range enforcers {
			if me, ok := e.(MeterEnforcer); ok {
				me.ApplyMeters(n, changes[n])
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
