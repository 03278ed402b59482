package alloc

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

const tick = 100 * time.Millisecond

// run steps one demand on one link through a capacity trace (one value per tick) and returns the
// decision after each step and how often it changed.
func run(cfg Config, layers []cc.Bitrate, capacity []cc.Bitrate) (decisions []int, changes int) {
	a := New(cfg)
	demands := []Demand{{Path: []int{0}, Layers: layers}}
	states := make([]State, 1)
	links := make([]Link, 1)
	for i, c := range capacity {
		links[0].Available = c
		prev := states[0].Layers
		a.Step(time.Duration(i)*tick, links, demands, states)
		if i > 0 && states[0].Layers != prev {
			changes++
		}
		decisions = append(decisions, states[0].Layers)
	}
	return decisions, changes
}

func constant(c cc.Bitrate, n int) []cc.Bitrate {
	out := make([]cc.Bitrate, n)
	for i := range out {
		out[i] = c
	}
	return out
}

func TestUpgradeWaitsForHoldDowngradeIsImmediate(t *testing.T) {
	cfg := DefaultConfig() // hold 2 s
	// 2 Mbit/s for 10 s, 3 Mbit/s for 10 s, then 1 Mbit/s.
	trace := append(append(constant(mbps(2), 100), constant(mbps(3), 100)...), constant(mbps(1), 10)...)
	got, _ := run(cfg, seed000Layers, trace)
	if got[0] != 2 {
		t.Fatalf("a new demand gets what fits at once: %d layers, want 2", got[0])
	}
	upAt := -1
	for i := 100; i < 200; i++ {
		if got[i] == 3 {
			upAt = i
			break
		}
	}
	if wait := time.Duration(upAt-100) * tick; upAt < 0 || wait < cfg.Hold || wait > cfg.Hold+2*tick {
		t.Fatalf("upgrade %v after the capacity rose, want after the %v hold (within two ticks)", wait, cfg.Hold)
	}
	if got[200] != 1 {
		t.Fatalf("at the first step after the capacity fell to 1 Mbit/s: %d layers, want 1 at once", got[200])
	}
}

func TestPendingUpgradeRestartsWhenTheLayerStopsFitting(t *testing.T) {
	// 3 Mbit/s with a dip to 2 Mbit/s every 1.5 s: the third layer never fits for 2 s in a row.
	var trace []cc.Bitrate
	for range 40 {
		trace = append(trace, constant(mbps(3), 14)...)
		trace = append(trace, mbps(2))
	}
	trace[0] = mbps(2) // start at two layers
	got, changes := run(DefaultConfig(), seed000Layers, trace)
	for i, g := range got {
		if g != 2 {
			t.Fatalf("step %d: %d layers; the upgrade should never become due", i, g)
		}
	}
	if changes != 0 {
		t.Fatalf("%d changes, want 0", changes)
	}
}

// flappingTrace is a capacity that hovers around what three layers need (2.4 Mbit/s): a level
// that changes every second, between 2.2 and 2.9 Mbit/s, plus noise every tick.
func flappingTrace(seconds int) []cc.Bitrate {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []cc.Bitrate
	for range seconds {
		level := 2.2 + 0.7*rng.Float64()
		for range int(time.Second / tick) {
			out = append(out, mbps(level+0.1*(rng.Float64()-0.5)))
		}
	}
	return out
}

func TestHysteresisBoundsFlapping(t *testing.T) {
	const seconds = 120
	trace := flappingTrace(seconds)
	naive := DefaultConfig()
	naive.Margin, naive.KeepMargin, naive.Hold, naive.HoldMax = 0, 0, 0, 0
	_, naiveChanges := run(naive, seed000Layers, trace)
	cfg := DefaultConfig()
	got, changes := run(cfg, seed000Layers, trace)
	// Without hysteresis the decision follows every crossing of 2.4 Mbit/s.
	if naiveChanges < 40 {
		t.Fatalf("the trace should make a naive allocator flap: only %d changes", naiveChanges)
	}
	// With it, every upgrade needs the hold time of fit, and a failed upgrade doubles the hold
	// (2, 4, 8, 16, then 30 s): in 120 s even if every upgrade failed there is room for at most
	// 2+4+8+16+30+30+30 ≥ 120 → 7 upgrades, so at most 15 changes counting the downgrades and the
	// first one.
	if changes > 15 {
		t.Fatalf("%d changes with hysteresis over %d s (naive: %d), want at most 15", changes, seconds, naiveChanges)
	}
	// And it still uses the capacity: three layers for a good part of the time.
	three := 0
	for _, g := range got {
		if g == 3 {
			three++
		}
	}
	if three == 0 {
		t.Fatal("never upgraded to three layers: hysteresis that never upgrades is not the point")
	}
	t.Logf("changes: naive %d, hysteresis %d; three layers %d%% of the time", naiveChanges, changes, 100*three/len(got))
}

func TestFailedUpgradeDoublesTheHold(t *testing.T) {
	cfg := DefaultConfig()
	// 3 Mbit/s for 2.5 s (upgrade after 2 s), 2 Mbit/s for 1 s (the upgrade fails), back to 3.
	trace := append(append(constant(mbps(2), 1), constant(mbps(3), 25)...), constant(mbps(2), 10)...)
	trace = append(trace, constant(mbps(3), 60)...)
	a := New(cfg)
	demands := []Demand{{Path: []int{0}, Layers: seed000Layers}}
	states := make([]State, 1)
	var ups []time.Duration
	for i, c := range trace {
		prev := states[0].Layers
		a.Step(time.Duration(i)*tick, []Link{{Available: c}}, demands, states)
		if i > 0 && states[0].Layers > prev {
			ups = append(ups, time.Duration(i)*tick)
		}
	}
	if len(ups) != 2 {
		t.Fatalf("upgrades at %v, want two", ups)
	}
	// The second upgrade waits twice the hold after the capacity came back at 3.6 s.
	if want := 36*tick + 2*cfg.Hold; ups[1] < want || ups[1] > want+2*tick {
		t.Fatalf("second upgrade at %v, want at %v (doubled hold)", ups[1], want)
	}
}

func TestNewcomerTakesItsShareAtOnce(t *testing.T) {
	// A has the link alone (3 layers in 3.5 Mbit/s). When B arrives, B's base and second layer
	// come before A's third: A is cut in the same step, and the link is never over-subscribed.
	cfg := DefaultConfig()
	links := []Link{{Available: mbps(3.5)}}
	a := New(cfg)
	demands := []Demand{{Path: []int{0}, Layers: seed000Layers}}
	states := make([]State, 1, 2)
	a.Step(0, links, demands, states)
	if states[0].Layers != 3 {
		t.Fatalf("alone: %d layers, want 3", states[0].Layers)
	}
	demands = append(demands, Demand{Path: []int{0}, Layers: seed000Layers})
	states = append(states, State{})
	a.Step(tick, links, demands, states)
	if got := layersOf(states); !equalInts(got, []int{2, 2}) {
		t.Fatalf("after B arrives: %v, want [2 2]", got)
	}
}

func TestJointNeverOversubscribes(t *testing.T) {
	// Random demands over a small topology and random capacity changes: at every step, what the
	// decisions use on each link (with KeepMargin) fits, except for base layers flagged Over.
	rng := rand.New(rand.NewPCG(7, 8))
	cfg := DefaultConfig()
	cfg.KeepMargin = 0.05
	a := New(cfg)
	links := make([]Link, 4)
	demands := make([]Demand, 12)
	for i := range demands {
		n := 1 + rng.IntN(4)
		layers := make([]cc.Bitrate, n)
		for j := range layers {
			layers[j] = mbps(0.2 + rng.Float64())
		}
		path := []int{0, 1 + rng.IntN(3)}
		demands[i] = Demand{Path: path, Layers: layers}
	}
	states := make([]State, len(demands))
	use := make([]cc.Bitrate, len(links))
	for step := range 2000 {
		for i := range links {
			if step == 0 || rng.IntN(10) == 0 {
				links[i].Available = mbps(1 + 12*rng.Float64())
			}
		}
		a.Step(time.Duration(step)*tick, links, demands, states)
		clear(use)
		over := make([]bool, len(links))
		for i, d := range demands {
			for k := range states[i].Layers {
				for _, li := range d.Path {
					use[li] += withMargin(d.Layers[k], cfg.KeepMargin)
				}
			}
			if states[i].Over {
				for _, li := range d.Path {
					over[li] = true
				}
			}
		}
		for li := range links {
			if use[li] > links[li].Available && !over[li] {
				t.Fatalf("step %d: link %d carries %v of %v", step, li, use[li], links[li].Available)
			}
		}
	}
}

func TestPaperModeOscillatesOnSharedLinks(t *testing.T) {
	// Two paths share 2 Mbit/s. Algorithm 1 per path: both see room for two layers, take them
	// (2.4 > 2), then both see too little and drop to one, and so on. The joint allocator settles.
	links := []Link{{Available: mbps(2)}}
	demands := []Demand{{Path: []int{0}, Layers: seed000Layers}, {Path: []int{0}, Layers: seed000Layers}}
	count := func(cfg Config) (overs, changes int) {
		a := New(cfg)
		states := make([]State, 2)
		for i := range 50 {
			prev := layersOf(states)
			a.Step(time.Duration(i)*tick, links, demands, states)
			if demands[0].Rate(states[0].Layers)+demands[1].Rate(states[1].Layers) > links[0].Available {
				overs++
			}
			if i > 0 && !equalInts(prev, layersOf(states)) {
				changes++
			}
		}
		return overs, changes
	}
	paper := DefaultConfig()
	paper.Mode = ModePaper
	pOvers, pChanges := count(paper)
	jOvers, jChanges := count(DefaultConfig())
	if pOvers < 10 || pChanges < 10 {
		t.Errorf("paper mode: %d steps over capacity, %d changes; expected it to oscillate", pOvers, pChanges)
	}
	if jOvers != 0 || jChanges != 0 {
		t.Errorf("joint: %d steps over capacity, %d changes; want 0 and 0", jOvers, jChanges)
	}
}

func TestMarginHoldsWhateverTheArrivalOrder(t *testing.T) {
	// Seed 000's experiment 2: sessions join one by one on 10 Mbit/s. The fourth must not get its
	// temporal layer just because the first three's layers are already granted: with the margin,
	// 4 × 2.64 > 10, as when all four arrive together. The fifth takes two layers, and fairness
	// puts them before the third layers of the others: one of those goes, as when all five arrive
	// together.
	cfg := DefaultConfig()
	a := New(cfg)
	links := []Link{{Available: mbps(10)}}
	var demands []Demand
	var states []State
	want := [][]int{{3}, {3, 3}, {3, 3, 3}, {3, 3, 3, 2}, {3, 3, 2, 2, 2}}
	for i := range 5 {
		demands = append(demands, Demand{Path: []int{0}, Layers: seed000Layers})
		states = append(states, State{})
		for s := range 30 {
			a.Step(time.Duration(i*30+s)*tick, links, demands, states)
		}
		if got := layersOf(states); !equalInts(got, want[i]) {
			t.Fatalf("after %d sessions joined one by one: %v, want %v", i+1, got, want[i])
		}
		fresh := make([]State, len(demands))
		New(cfg).Step(0, links, demands, fresh)
		if got := layersOf(fresh); !equalInts(got, want[i]) {
			t.Fatalf("%d sessions at once: %v, want %v", i+1, got, want[i])
		}
	}
}

func TestDeadBandIsStable(t *testing.T) {
	// A and B start on 4 Mbit/s: with the margin, A gets three layers (3.96 Mbit/s), B two. The
	// link then shrinks to 3.7 Mbit/s: 3.6 still fits without the margin, so nobody is cut, and B
	// cannot take A's room for its third layer. Nothing changes for a minute.
	cfg := DefaultConfig()
	a := New(cfg)
	demands := []Demand{{Path: []int{0}, Layers: seed000Layers}, {Path: []int{0}, Layers: seed000Layers}}
	states := make([]State, 2)
	a.Step(0, []Link{{Available: mbps(4)}}, demands, states)
	if got := layersOf(states); !equalInts(got, []int{3, 2}) {
		t.Fatalf("at 4 Mbit/s: %v, want [3 2]", got)
	}
	links := []Link{{Available: mbps(3.7)}}
	for i := 1; i < 600; i++ {
		a.Step(time.Duration(i)*tick, links, demands, states)
		if got := layersOf(states); !equalInts(got, []int{3, 2}) {
			t.Fatalf("step %d: %v inside the dead band, want [3 2] kept", i, got)
		}
	}
	// Below 3.6 Mbit/s A is over capacity: it is cut, down to what fits with the margin.
	a.Step(600*tick, []Link{{Available: mbps(3.5)}}, demands, states)
	if got := layersOf(states); !equalInts(got, []int{2, 2}) {
		t.Fatalf("at 3.5 Mbit/s: %v, want [2 2]", got)
	}
}

func TestCutLandsWithMargin(t *testing.T) {
	// Four sessions with all layers on 10 Mbit/s (one held at 2, as the margin requires), then the
	// link drops to 6 Mbit/s. Cutting only to what fits exactly (3+2+2+2 = 6.0 Mbit/s) would leave
	// no room for a keyframe; strata cuts to what fits with the margin: 2 layers each (5.28).
	a := New(DefaultConfig())
	demands := make([]Demand, 4)
	for i := range demands {
		demands[i] = Demand{Path: []int{0}, Layers: seed000Layers}
	}
	states := make([]State, 4)
	a.Step(0, []Link{{Available: mbps(10)}}, demands, states)
	a.Step(tick, []Link{{Available: mbps(6)}}, demands, states)
	if got := layersOf(states); !equalInts(got, []int{2, 2, 2, 2}) {
		t.Fatalf("after the drop: %v, want [2 2 2 2]", got)
	}
	// A cut on one link leaves the dead band of other links alone.
	// Link 0 goes from 3 to 2.5 Mbit/s (inside its dead band: 2.4 fits, 2.64 would not), link 1
	// from 2 to 1 Mbit/s (a cut).
	links := []Link{{Available: mbps(2.5)}, {Available: mbps(1)}}
	demands = []Demand{{Path: []int{0}, Layers: seed000Layers}, {Path: []int{1}, Layers: seed000Layers}}
	states = []State{{}, {}}
	a.Step(0, []Link{{Available: mbps(3)}, {Available: mbps(2)}}, demands, states)
	a.Step(tick, links, demands, states)
	if got := layersOf(states); !equalInts(got, []int{3, 1}) {
		t.Fatalf("independent links: %v, want [3 1]", got)
	}
}

// TestWorkedExample follows the worked example of docs/NETCTL.md step by step.
func TestWorkedExample(t *testing.T) {
	a := New(DefaultConfig())
	var demands []Demand
	var states []State
	now := time.Duration(0)
	settle := func(capacity float64, steps int) []int {
		for range steps {
			now += tick
			a.Step(now, []Link{{Available: mbps(capacity)}}, demands, states)
		}
		return layersOf(states)
	}
	join := func() {
		demands = append(demands, Demand{Path: []int{0}, Layers: seed000Layers})
		states = append(states, State{})
	}
	for range 3 {
		join()
	}
	rows := []struct {
		what string
		do   func()
		cap  float64
		want []int
	}{
		{"sessions 1-3 join", func() {}, 10, []int{3, 3, 3}},
		{"session 4 joins", join, 10, []int{3, 3, 3, 2}},
		{"session 5 joins", join, 10, []int{3, 3, 2, 2, 2}},
		{"session 5 leaves", func() { demands, states = demands[:4], states[:4] }, 10, []int{3, 3, 3, 2}},
		{"link drops to 6 Mbit/s", func() {}, 6, []int{2, 2, 2, 2}},
		{"link back to 10 Mbit/s", func() {}, 10, []int{3, 3, 3, 2}},
	}
	for _, r := range rows {
		r.do()
		if got := settle(r.cap, 50); !equalInts(got, r.want) {
			t.Fatalf("%s: %v, want %v", r.what, got, r.want)
		}
	}
}
