package netctl

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/alloc"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/linkstate"
)

// linkView is a link's state as of the last Update.
type linkView struct {
	capacity, load, managed, background, available cc.Bitrate
	media                                          cc.Bitrate // after the step's decisions (meters)
	override                                       bool
	source                                         string
	age                                            time.Duration
	subs                                           int
}

// Update recomputes link state, decisions and drop rules at time now. It returns the decisions
// whose layer count changed and those of new subscriptions (watchers get them as events too), and
// hands changed rule sets to the rule table and the enforcers before returning. Enforcers must
// not call back into the controller.
func (c *Controller) Update(now time.Duration) []api.Decision {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	changed, ruleChanges, meterChanges, enforcers := c.step(now)
	for _, n := range sortedKeys(ruleChanges) {
		c.rules.ApplyRules(n, ruleChanges[n])
		for _, e := range enforcers {
			e.ApplyRules(n, ruleChanges[n])
		}
	}
	c.applyMeters(meterChanges, enforcers)
	return changed
}

// step is Update's work under the controller's lock (deferred: a bug that panics in a request's
// Update must not leave the controller locked for every later request).
func (c *Controller) step(now time.Duration) (changed []api.Decision, rules map[string][]api.Rule, meters map[string][]api.Meter, enforcers []Enforcer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updateLinks(now)
	c.observePeaks(now)
	c.allocate(now)
	rules = c.computeRules() // before publish, which compares rules with what switches hold
	changed = c.publish()
	meters = c.computeMeters(now)
	return changed, rules, meters, slices.Clone(c.enforcers)
}

// updateLinks works out every link's capacity, load and what is left for managed streams.
func (c *Controller) updateLinks(now time.Duration) {
	for i, l := range c.topo.Links() {
		v := &c.links[i]
		*v = linkView{capacity: l.Capacity, source: "static"}
		if o := c.override[i]; o > 0 {
			v.capacity, v.override = o, true
		}
		if s, ok := linkstate.Resolve(c.sources, i, now, c.cfg.StaleAfter); ok {
			v.load, v.source, v.age = s.Load, s.Source, now-s.At
		}
	}
	for _, sub := range c.order {
		r := c.attributed(sub, now)
		for _, li := range sub.path {
			c.links[li].managed += r
			c.links[li].subs++
		}
	}
	for i := range c.links {
		v := &c.links[i]
		if v.source != "static" {
			v.background = max(0, v.load-v.managed)
		}
		v.available = alloc.Reserved(v.capacity, v.background, c.reserve(i))
	}
}

// attributed is the rate the controller assumes a subscription puts on its links.
func (c *Controller) attributed(sub *subscription, now time.Duration) cc.Bitrate {
	cur := rateOf(sub.stream.rates, sub.state.Layers)
	if now-sub.changedAt < c.cfg.Settle {
		return max(cur, sub.prevRate)
	}
	return cur
}

func rateOf(rates []cc.Bitrate, k int) cc.Bitrate {
	var sum cc.Bitrate
	for i := 0; i < k && i < len(rates); i++ {
		sum += rates[i]
	}
	return sum
}

// allocate runs the allocator over all subscriptions.
func (c *Controller) allocate(now time.Duration) {
	c.allocIn = c.allocIn[:0]
	for i := range c.links {
		c.allocIn = append(c.allocIn, alloc.Link{Available: c.links[i].available})
	}
	c.demands, c.states = c.demands[:0], c.states[:0]
	for _, sub := range c.order {
		c.demands = append(c.demands, alloc.Demand{Path: sub.path, Layers: c.demandRates(sub)})
		c.states = append(c.states, sub.state)
	}
	c.alloc.Step(now, c.allocIn, c.demands, c.states)
	for i, sub := range c.order {
		if old := sub.state.Layers; c.states[i].Layers != old {
			sub.prevRate, sub.changedAt = rateOf(sub.stream.rates, old), now
		}
		sub.state = c.states[i]
	}
}

// publish turns states into decisions, numbers the changes and tells the watchers.
func (c *Controller) publish() []api.Decision {
	var changed []api.Decision
	for _, sub := range c.order {
		d := c.decision(sub)
		prev, ok := c.published[sub.ID]
		if ok && prev.Layers == d.Layers && prev.MaxLayers == d.MaxLayers && prev.Enforced == d.Enforced {
			d.Seq = prev.Seq
			c.published[sub.ID] = d
			continue
		}
		c.seq++
		d.Seq = c.seq
		c.published[sub.ID] = d
		changed = append(changed, d)
		c.notify(Event{Type: api.EventDecision, Decision: d})
	}
	for _, id := range c.removed {
		if _, ok := c.published[id]; !ok || c.subs[id] != nil {
			continue // never published, or deleted and registered again
		}
		delete(c.published, id)
		c.seq++
		c.notify(Event{Type: api.EventRemoved, Removed: api.Removed{Subscription: id, Seq: c.seq}})
	}
	c.removed = c.removed[:0]
	return changed
}

func (c *Controller) decision(sub *subscription) api.Decision {
	s := &sub.state
	d := api.Decision{
		Subscription: sub.ID, Stream: sub.Stream, Receiver: sub.receiver,
		Layers: s.Layers, MaxLayers: len(sub.stream.rates), RateBps: int64(rateOf(sub.stream.rates, s.Layers)),
		Target: s.Target, Pending: s.Pending, PathAvailableBps: int64(cc.MaxBitrate),
		Enforced: c.enforced(sub),
	}
	for _, li := range sub.path {
		d.PathAvailableBps = min(d.PathAvailableBps, int64(c.links[li].available))
	}
	if s.Limit >= 0 {
		d.Limit = c.topo.Links()[s.Limit].Name
	}
	switch {
	case s.Over:
		d.Reason = fmt.Sprintf("base layer kept although it does not fit on link %s", d.Limit)
	case s.Pending > 0:
		d.Reason = fmt.Sprintf("upgrade to %d layers once it has fitted for %v", s.Pending, s.Hold)
	case d.Layers == d.MaxLayers:
		d.Reason = "all layers fit"
	case d.Limit != "":
		d.Reason = fmt.Sprintf("layer %d does not fit on link %s", s.Target+1, d.Limit)
	case s.Target > s.Layers:
		d.Reason = "upgrade due at the next step"
	default:
		d.Reason = "held back by hysteresis"
	}
	return d
}

// computeRules builds every enforcement node's rules and returns the sets that changed.
func (c *Controller) computeRules() map[string][]api.Rule {
	next := map[string][]api.Rule{}
	for _, sub := range c.order {
		node, li, ok := c.topo.EnforcementPoint(sub.path)
		sub.hasRule = ok
		if !ok {
			continue
		}
		r := api.Rule{
			Node: node, Link: c.topo.Links()[li].Name, Stream: sub.Stream, Subscription: sub.ID,
			Receiver: sub.receiver, Allow: sub.state.Layers, Layers: len(sub.stream.rates),
		}
		for k := r.Allow; k < len(sub.stream.Layers); k++ {
			if ssrc := sub.stream.Layers[k].SSRC; ssrc != 0 {
				r.DropSSRCs = append(r.DropSSRCs, ssrc)
			}
		}
		addMarks(&r, sub)
		sub.rule = r
		next[node] = append(next[node], r) // c.order is sorted, so each set is sorted by subscription
	}
	changes := changedNodes(next, c.nodeRules, func(a, b []api.Rule) bool { return slices.EqualFunc(a, b, ruleEqual) })
	c.nodeRules = next
	return changes
}

// changedNodes returns the nodes whose set differs between prev and next, with their new set (an
// empty one for a node next no longer has).
func changedNodes[T any](next, prev map[string][]T, equal func(a, b []T) bool) map[string][]T {
	changes := map[string][]T{}
	for node, set := range next {
		if !equal(set, prev[node]) {
			changes[node] = set
		}
	}
	for node := range prev {
		if _, ok := next[node]; !ok {
			changes[node] = []T{}
		}
	}
	return changes
}

func ruleEqual(a, b api.Rule) bool {
	return a.Node == b.Node && a.Link == b.Link && a.Stream == b.Stream && a.Subscription == b.Subscription &&
		a.Receiver == b.Receiver && a.Allow == b.Allow && a.Layers == b.Layers && slices.Equal(a.DropSSRCs, b.DropSSRCs) &&
		flowEqual(a.Flow, b.Flow) && slices.Equal(a.PassDSCP, b.PassDSCP) && slices.Equal(a.DropDSCP, b.DropDSCP)
}

// Decisions returns the current decisions, by subscription id.
func (c *Controller) Decisions() api.Decisions {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshot()
}

func (c *Controller) snapshot() api.Decisions {
	out := api.Decisions{Seq: c.seq, Decisions: make([]api.Decision, 0, len(c.published))}
	for _, d := range c.published {
		out.Decisions = append(out.Decisions, d)
	}
	slices.SortFunc(out.Decisions, func(a, b api.Decision) int { return strings.Compare(a.Subscription, b.Subscription) })
	return out
}

// Decision returns the current decision for one subscription.
func (c *Controller) Decision(id string) (api.Decision, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.published[id]
	return d, ok
}

// Links returns every link's state as of the last Update.
func (c *Controller) Links() []api.LinkState {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]api.LinkState, len(c.links))
	for i, l := range c.topo.Links() {
		v := c.links[i]
		out[i] = api.LinkState{
			Name: l.Name, From: l.From, To: l.To, CapacityBps: int64(v.capacity), Override: v.override,
			LoadBps: int64(v.load), ManagedBps: int64(v.managed), BackgroundBps: int64(v.background),
			AvailableBps: int64(v.available), Source: v.source, AgeMs: float64(v.age) / 1e6, Subscriptions: v.subs,
		}
	}
	return out
}
