package alloc

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Allocator runs allocation steps. It keeps scratch space between calls (a step allocates nothing
// once the slices have grown) and is not safe for concurrent use.
type Allocator struct {
	cfg Config

	residual []cc.Bitrate
	granted  []int
	cost     []cc.Bitrate
	frozen   []bool
	limit    []int
	over     []bool
	caps     []int
	held     []int
	// reserve: held layers are granted whether or not they fit (full pass).
	reserve bool
	// hot marks links found over capacity in a keep pass, or where layers were just admitted:
	// there held layers cost Margin, not KeepMargin.
	hot []bool
}

// New returns an allocator. The configuration should have passed Validate; an unknown mode is
// treated as ModeJoint.
func New(cfg Config) *Allocator { return &Allocator{cfg: cfg} }

// Config returns the allocator's configuration.
func (a *Allocator) Config() Config { return a.cfg }

// Step makes one decision for every demand at time now, updating states (len(states) must equal
// len(demands); states[i] belongs to demands[i] and must be passed again at the next step). Links
// are indexed by the demands' paths.
func (a *Allocator) Step(now time.Duration, links []Link, demands []Demand, states []State) {
	for i := range states {
		if n := len(demands[i].Layers); states[i].Layers > n {
			states[i].Layers = n // the stream lost layers
		}
	}
	if a.cfg.Mode == ModePaper {
		a.stepPaper(links, demands, states)
		return
	}
	a.hot = setLen(a.hot, len(links))
	clear(a.hot)
	a.keepPass(now, links, demands, states)
	// Full pass: what every demand could have. Every layer costs rate×(1+Margin), so a new layer
	// is granted only if it fits with the margin on top of everything already granted (with the
	// margin too); layers already granted are reserved even when they do not fit with the margin
	// (the keep passes decide cuts). Demands above their decision start (or continue) to wait for
	// their hold time.
	a.caps = setLen(a.caps, len(states))
	a.held = setLen(a.held, len(states))
	for i := range states {
		a.caps[i], a.held[i] = len(demands[i].Layers), states[i].Layers
	}
	a.reserve = true
	a.fill(links, demands)
	a.reserve = false
	for i := range states {
		s := &states[i]
		s.Target, s.Limit = a.granted[i], a.limit[i]
		if s.offer(now, a.granted[i], &a.cfg) {
			// The new layers were admitted with the margin, but fairness may have put them before
			// layers others hold: on these links everything must fit with the margin again.
			for _, li := range demands[i].Path {
				a.hot[li] = true
			}
		}
	}
	// Cut at once what the admissions took from others, so that no link is over-subscribed.
	a.keepPass(now, links, demands, states)
	for i := range states {
		states[i].Over = a.over[i]
	}
}

// keepPass checks that the current decisions fit (with KeepMargin) and cuts those that do not,
// at once. A link where something had to be cut is over capacity: there the cut goes down to what
// fits with the full Margin, so that the decisions do not land at exactly 100 % of the link, where
// the next keyframe would overflow it; elsewhere KeepMargin still applies. Links already marked
// hot (a.hot, cleared on return) get the full Margin from the start.
func (a *Allocator) keepPass(now time.Duration, links []Link, demands []Demand, states []State) {
	a.caps = setLen(a.caps, len(states))
	a.held = setLen(a.held, len(states))
	for i := range states {
		a.caps[i], a.held[i] = states[i].Layers, states[i].Layers
		if !states[i].started {
			a.caps[i] = 0
		}
	}
	a.fill(links, demands)
	cut := false
	for i := range states {
		if a.granted[i] < a.held[i] && a.limit[i] >= 0 {
			a.hot[a.limit[i]], cut = true, true
		}
	}
	if cut {
		a.fill(links, demands)
	}
	clear(a.hot)
	for i := range states {
		states[i].cut(now, a.granted[i], &a.cfg)
	}
}

// fill is progressive filling at layer granularity: it repeatedly grants one more layer to the
// demand that has the fewest layers (ties: the one whose next layer is already held, then the one
// using the least bandwidth, then the first), if that layer fits on every link of its path; a
// demand whose next layer does not fit is done, since capacity only shrinks as layers are granted.
// That makes the result max-min fair in layers: no demand could get another layer without taking
// one from a demand that has as many or fewer. a.caps bounds each demand, a.held says which layers
// are held (see need for what each layer costs). Results go to a.granted, a.limit, a.over.
func (a *Allocator) fill(links []Link, demands []Demand) {
	n := len(demands)
	a.residual = setLen(a.residual, len(links))
	for i, l := range links {
		a.residual[i] = l.Available
	}
	a.granted, a.cost = setLen(a.granted, n), setLen(a.cost, n)
	a.frozen, a.limit, a.over = setLen(a.frozen, n), setLen(a.limit, n), setLen(a.over, n)
	for i := range n {
		a.granted[i], a.cost[i], a.frozen[i], a.limit[i], a.over[i] = 0, 0, false, -1, false
	}
	for {
		best := -1
		for i := range n {
			if !a.frozen[i] && a.granted[i] < a.caps[i] && (best < 0 || a.before(i, best)) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		a.grow(best, &demands[best])
	}
}

// before orders the demands competing for the next layer.
func (a *Allocator) before(i, j int) bool {
	if a.granted[i] != a.granted[j] {
		return a.granted[i] < a.granted[j]
	}
	hi, hj := a.granted[i] < a.held[i], a.granted[j] < a.held[j]
	if hi != hj {
		return hi
	}
	if a.cost[i] != a.cost[j] {
		return a.cost[i] < a.cost[j]
	}
	return i < j
}

// grow tries to grant demand i its next layer.
func (a *Allocator) grow(i int, d *Demand) {
	k := a.granted[i]
	held := k < a.held[i]
	rate := d.Layers[k]
	tight := -1
	for _, li := range d.Path {
		if need := a.need(rate, held, li); a.residual[li] < need && (tight < 0 || a.residual[li] < a.residual[tight]) {
			tight = li
		}
	}
	if tight >= 0 {
		switch {
		case held && a.reserve:
			// kept for now: only a keep pass cuts granted layers
		case k == 0 && a.cfg.KeepBase:
			a.limit[i], a.over[i] = tight, true
		default:
			a.limit[i], a.frozen[i] = tight, true
			return
		}
	}
	for _, li := range d.Path {
		a.residual[li] -= a.need(rate, held, li)
	}
	a.granted[i]++
	a.cost[i] += rate
	if a.granted[i] == len(d.Layers) && !a.over[i] {
		a.limit[i] = -1
	}
}

// need is what a layer of the given rate takes on link li: rate×(1+Margin) for a new layer, or
// for any layer in the full pass and on a link found over capacity; rate×(1+KeepMargin) for a
// held layer otherwise.
func (a *Allocator) need(rate cc.Bitrate, held bool, li int) cc.Bitrate {
	if held && !a.reserve && (len(a.hot) == 0 || !a.hot[li]) {
		return withMargin(rate, a.cfg.KeepMargin)
	}
	return withMargin(rate, a.cfg.Margin)
}

// offer applies the hysteresis to an upgrade the full pass allows; it reports whether the decision
// went up. A new demand takes the target at once.
func (s *State) offer(now time.Duration, target int, cfg *Config) bool {
	if !s.started {
		s.started, s.Hold = true, cfg.Hold
		s.Layers, s.Pending = target, 0
		return target > 0
	}
	if s.upgraded && now-s.lastUp >= cfg.FailWindow {
		s.upgraded, s.Hold = false, cfg.Hold // the last upgrade held: back to the normal hold
	}
	if target <= s.Layers {
		s.Pending = 0
		return false
	}
	if s.Pending == 0 {
		s.Pending, s.PendingSince = target, now
	} else {
		s.Pending = min(s.Pending, target)
	}
	if now-s.PendingSince < s.Hold {
		return false
	}
	s.Layers, s.Pending = s.Pending, 0
	s.upgraded, s.lastUp = true, now
	return true
}

// cut lowers the decision to what still fits, at once.
func (s *State) cut(now time.Duration, fits int, cfg *Config) {
	if !s.started || fits >= s.Layers {
		return
	}
	s.Layers, s.Pending = fits, 0
	if s.upgraded && now-s.lastUp < cfg.FailWindow {
		s.Hold = min(2*max(s.Hold, time.Millisecond), cfg.HoldMax)
	}
	s.upgraded = false
}

// withMargin is rate×(1+margin), rounded up so that a margin never rounds away.
func withMargin(r cc.Bitrate, margin float64) cc.Bitrate {
	if margin <= 0 || r <= 0 {
		return r
	}
	return cc.BitrateFromFloat(math.Ceil(float64(r) * (1 + margin)))
}

// setLen returns s with length n, reusing its array when it is large enough.
func setLen[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/2)
}
