package policy

import (
	"slices"

	"github.com/strata-rtc/strata/cc"
)

// rung is one step of a track's ladder: a layer and what it costs.
type rung struct {
	layer Layer
	rate  cc.Bitrate
}

// ladder lists the layers of a track a policy may choose, cheapest first: available (measured)
// layers within the caps, each costing more than the one before (a layer that costs no more than a
// lower one is left out: it would never be worth its keyframe). A track with nothing measured yet
// gets its lowest layer at no cost, so new tracks start somewhere.
func ladder(t *Track) []rung {
	if t.Paused {
		return nil
	}
	var out []rung
	climb(t, func(r rung) { out = append(out, r) })
	if len(out) == 0 {
		out = append(out, firstRung(t))
	}
	return out
}

// climb calls f with each rung of t's ladder, cheapest first (ladder without the allocation).
func climb(t *Track, f func(rung)) {
	var top cc.Bitrate
	for s := int8(0); s < MaxSpatial && s <= t.Max.Spatial; s++ {
		for tl := int8(0); tl < MaxTemporal && tl <= t.Max.Temporal; tl++ {
			r := t.Rates[s][tl]
			if r <= 0 || r <= top {
				continue
			}
			top = r
			f(rung{Layer{s, tl}, r})
		}
	}
}

// firstRung is the rung of a track with nothing measured.
func firstRung(t *Track) rung {
	return rung{Layer{0, max(0, min(t.Max.Temporal, MaxTemporal-1))}, 0}
}

// Best is the top of t's ladder: the layer a policy gives the track when the path carries
// everything (NoLayer for a paused track). It allocates nothing, so that the allocator can tell
// cheaply whether a subscriber already gets all it can.
func Best(t *Track) Layer {
	if t.Paused {
		return NoLayer
	}
	best := firstRung(t).layer
	climb(t, func(r rung) { best = r.layer })
	return best
}

// allocation is a rung index per track (-1: nothing).
type allocation []int

// plan holds the ladders of a decision and the order in which rungs are handed out.
type plan struct {
	ladders [][]rung
	screen  []bool
	// starved tracks were paused by the policy for lack of bandwidth: every allocation leaves them
	// out (-1) until one resumes them explicitly.
	starved []bool
}

func newPlan(tracks []Track) *plan {
	p := &plan{ladders: make([][]rung, len(tracks)), screen: make([]bool, len(tracks)), starved: make([]bool, len(tracks))}
	for i := range tracks {
		p.ladders[i] = ladder(&tracks[i])
		p.screen[i] = tracks[i].Screen
		p.starved[i] = tracks[i].Starved && len(p.ladders[i]) > 0
	}
	return p
}

func (p *plan) usage(a allocation) cc.Bitrate {
	var sum cc.Bitrate
	for i, r := range a {
		if r >= 0 {
			sum += p.ladders[i][r].rate
		}
	}
	return sum
}

func (p *plan) layers(a allocation, dst []Layer) []Layer {
	dst = dst[:0]
	for i, r := range a {
		if r < 0 {
			dst = append(dst, NoLayer)
		} else {
			dst = append(dst, p.ladders[i][r].layer)
		}
	}
	return dst
}

// base gives every track with a ladder its lowest rung, except the starved ones (see pause.go for
// when the policy pauses a track).
func (p *plan) base() allocation {
	a := make(allocation, len(p.ladders))
	for i, l := range p.ladders {
		a[i] = -1
		if len(l) > 0 && !p.starved[i] {
			a[i] = 0
		}
	}
	return a
}

// steps is the order in which rungs above the base are handed out: screen shares first, round-robin
// among them until each has all its rungs, then cameras round-robin (the fairest way to share: one
// rung per track per round). Starved tracks get none.
func (p *plan) steps() []int {
	var seq []int
	next := make([]int, len(p.ladders))
	for _, group := range [][]int{p.group(true), p.group(false)} {
		for more := true; more; {
			more = false
			for _, i := range group {
				if !p.starved[i] && next[i]+1 < len(p.ladders[i]) {
					next[i]++
					seq = append(seq, i)
					more = true
				}
			}
		}
	}
	return seq
}

// group lists the screen shares (or the cameras) in input order.
func (p *plan) group(screens bool) []int {
	var out []int
	for i, s := range p.screen {
		if s == screens {
			out = append(out, i)
		}
	}
	return out
}

// allocate hands out rungs in step order while they fit the budget; a track whose next rung does not
// fit gets no more (others may still climb).
func (p *plan) allocate(budget cc.Bitrate) allocation {
	a := p.base()
	used := p.usage(a)
	stuck := make([]bool, len(a))
	for _, i := range p.steps() {
		if stuck[i] {
			continue
		}
		delta := p.ladders[i][a[i]+1].rate - p.ladders[i][a[i]].rate
		if used+delta > budget {
			stuck[i] = true
			continue
		}
		a[i]++
		used += delta
	}
	return a
}

// best is the allocation with every track (but the starved ones) at its highest rung.
func (p *plan) best() allocation {
	a := p.base()
	for i, l := range p.ladders {
		if a[i] >= 0 {
			a[i] = len(l) - 1
		}
	}
	return a
}

// level returns the allocation after the first k steps (k clamped).
func (p *plan) level(k int) allocation {
	a := p.base()
	for n, i := range p.steps() {
		if n >= k {
			break
		}
		a[i]++
	}
	return a
}

// levelOf is the number of steps an allocation is above the base (the highest k with level(k) ≤ a
// track by track).
func (p *plan) levelOf(a allocation) int {
	cur := p.base()
	k := 0
	for _, i := range p.steps() {
		if cur[i]+1 > a[i] {
			break
		}
		cur[i]++
		k++
	}
	return k
}

// fromTargets maps the previous targets onto the ladders: the highest rung at or below each target
// (a track whose target layer disappeared falls to what is available); new tracks get their base.
func (p *plan) fromTargets(tracks []Track) allocation {
	a := p.base()
	for i := range tracks {
		l := p.ladders[i]
		if len(l) == 0 || tracks[i].Target.Spatial < 0 {
			continue
		}
		for r := len(l) - 1; r >= 0; r-- {
			if !tracks[i].Target.Less(l[r].layer) {
				a[i] = r
				break
			}
		}
	}
	return a
}

// nextStep is the allocation one rung above a: the first screen share that can climb, else the
// camera with the lowest rung (the one furthest behind), in input order on ties.
func (p *plan) nextStep(a allocation) (allocation, bool) {
	pick := -1
	for _, screens := range []bool{true, false} {
		for _, i := range p.group(screens) {
			if a[i] < 0 || a[i]+1 >= len(p.ladders[i]) {
				continue
			}
			if pick < 0 || (!screens && a[i] < a[pick]) {
				pick = i
			}
			if screens {
				break
			}
		}
		if pick >= 0 {
			break
		}
	}
	if pick < 0 {
		return nil, false
	}
	next := slices.Clone(a)
	next[pick]++
	return next, true
}

// keepSpatial limits a downgrade to temporal layers: a track whose rung in next has a lower spatial
// layer than in cur gets the lowest rung of its current spatial layer instead.
func (p *plan) keepSpatial(next, cur allocation) allocation {
	out := slices.Clone(next)
	for i := range out {
		if out[i] < 0 || cur[i] < 0 {
			continue
		}
		l := p.ladders[i]
		s := l[cur[i]].layer.Spatial
		if l[out[i]].layer.Spatial >= s {
			continue
		}
		for r := 0; r <= cur[i]; r++ {
			if l[r].layer.Spatial == s {
				out[i] = r
				break
			}
		}
	}
	return out
}

// pauseToFit pauses tracks, base layer and all, until the bases of the others fit the budget:
// cameras before screen shares, the last in input order first (the reverse of the order in which
// bases are handed out). The tracks that stay get their base layer only.
func (p *plan) pauseToFit(a allocation, budget cc.Bitrate) allocation {
	out := slices.Clone(a)
	for i := range out {
		if out[i] > 0 {
			out[i] = 0 // no rung above the base while any base is in question
		}
	}
	for _, screens := range []bool{false, true} {
		g := p.group(screens)
		for k := len(g) - 1; k >= 0 && p.usage(out) > budget; k-- {
			out[g[k]] = -1
		}
	}
	return out
}

// nextResume is a with the first starved track (screen shares first, then cameras in input order)
// given its base layer.
func (p *plan) nextResume(a allocation) (allocation, bool) {
	for _, screens := range []bool{true, false} {
		for _, i := range p.group(screens) {
			if p.starved[i] && a[i] < 0 {
				next := slices.Clone(a)
				next[i] = 0
				return next, true
			}
		}
	}
	return nil, false
}
