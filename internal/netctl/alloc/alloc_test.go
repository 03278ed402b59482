package alloc

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// seed000Layers are the paper's three layers: base 0.6, spatial 0.6, temporal 1.2 Mbit/s.
var seed000Layers = []cc.Bitrate{600 * cc.Kbps, 600 * cc.Kbps, 1200 * cc.Kbps}

func mbps(f float64) cc.Bitrate { return cc.BitrateFromFloat(f * 1e6) }

// algorithm1AsPrinted transcribes lines 4–10 of Algorithm 1 literally: c_min starts at ∞ and is
// replaced by c_i when c_i > c_min.
func algorithm1AsPrinted(available []cc.Bitrate) cc.Bitrate {
	cmin := cc.MaxBitrate
	for _, c := range available {
		if c > cmin {
			cmin = c
		}
	}
	return cmin
}

// maxReading is the other possible reading of the printed loop: keep the largest link capacity.
func maxReading(available []cc.Bitrate) cc.Bitrate {
	var c cc.Bitrate
	for _, a := range available {
		c = max(c, a)
	}
	return c
}

func TestPathCapacityIsTheMinimumNotTheMaximum(t *testing.T) {
	// Seed 000's experiment 1: 100 Mbit/s towards the SFU side, 2 Mbit/s to the receiver.
	path := []cc.Bitrate{mbps(100), mbps(10), mbps(2)}
	if got := PathCapacity(path); got != mbps(2) {
		t.Fatalf("PathCapacity = %v, want the narrowest link, 2 Mbit/s", got)
	}
	strata := Algorithm1(PathCapacity(path), seed000Layers)
	printed := Algorithm1(algorithm1AsPrinted(path), seed000Layers)
	maxed := Algorithm1(maxReading(path), seed000Layers)
	if strata != 2 {
		t.Errorf("strata's reading: %d layers on a 2 Mbit/s path, want 2 (1.2 Mbit/s; 2.4 does not fit)", strata)
	}
	if printed != 3 || maxed != 3 {
		t.Errorf("printed/max readings give %d/%d layers; the example should show them sending all 3", printed, maxed)
	}
	if strata == printed || strata == maxed {
		t.Error("the example does not tell the readings apart")
	}
	if got := PathCapacity(nil); got != cc.MaxBitrate {
		t.Errorf("empty path capacity = %v, want unlimited", got)
	}
}

func TestAlgorithm1StrictComparison(t *testing.T) {
	cases := []struct {
		cmin cc.Bitrate
		want int
	}{
		{0, 0}, {600 * cc.Kbps, 0}, {600*cc.Kbps + 1, 1}, {1200 * cc.Kbps, 1},
		{1200*cc.Kbps + 1, 2}, {2400 * cc.Kbps, 2}, {2400*cc.Kbps + 1, 3}, {cc.MaxBitrate, 3},
	}
	for _, c := range cases {
		if got := Algorithm1(c.cmin, seed000Layers); got != c.want {
			t.Errorf("Algorithm1(%v) = %d, want %d", c.cmin, got, c.want)
		}
	}
}

// step runs one allocation with fresh states and returns the decisions.
func step(cfg Config, links []Link, demands []Demand) []State {
	states := make([]State, len(demands))
	New(cfg).Step(0, links, demands, states)
	return states
}

func layersOf(states []State) []int {
	out := make([]int, len(states))
	for i, s := range states {
		out[i] = s.Layers
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func noMargin() Config {
	c := DefaultConfig()
	c.Margin, c.KeepMargin = 0, 0
	return c
}

func TestJointBaseLayersFirst(t *testing.T) {
	// Three sessions on 2 Mbit/s: the three base layers (1.8) fit, no second layer does. Per-path
	// allocation would let each claim the whole link.
	links := []Link{{Available: mbps(2)}}
	demands := []Demand{{Path: []int{0}, Layers: seed000Layers}, {Path: []int{0}, Layers: seed000Layers}, {Path: []int{0}, Layers: seed000Layers}}
	if got := layersOf(step(noMargin(), links, demands)); !equalInts(got, []int{1, 1, 1}) {
		t.Fatalf("joint = %v, want a base layer each [1 1 1]", got)
	}
	paper := noMargin()
	paper.Mode = ModePaper
	if got := layersOf(step(paper, links, demands)); !equalInts(got, []int{2, 2, 2}) {
		t.Fatalf("paper mode from scratch = %v, want each path to claim the link alone [2 2 2]", got)
	}
}

func TestJointMaxMinAtLayerGranularity(t *testing.T) {
	// A's layers cost 1 Mbit/s each, B's 0.5; 3 Mbit/s shared. Bases (1.5), then second layers:
	// B's first (it uses less), then A's, leaving nothing for a third.
	links := []Link{{Available: mbps(3)}}
	a := Demand{Path: []int{0}, Layers: []cc.Bitrate{mbps(1), mbps(1), mbps(1)}}
	b := Demand{Path: []int{0}, Layers: []cc.Bitrate{mbps(0.5), mbps(0.5), mbps(0.5)}}
	if got := layersOf(step(noMargin(), links, []Demand{a, b})); !equalInts(got, []int{2, 2}) {
		t.Fatalf("got %v, want [2 2]", got)
	}
	// A is also behind a 1.5 Mbit/s link of its own: what it cannot use goes to B.
	links = []Link{{Available: mbps(4)}, {Available: mbps(1.5)}}
	a.Path = []int{0, 1}
	b.Layers = a.Layers
	states := step(noMargin(), links, []Demand{a, b})
	if got := layersOf(states); !equalInts(got, []int{1, 3}) {
		t.Fatalf("got %v, want A limited by its own link to 1 and B taking the rest: [1 3]", got)
	}
	if states[0].Limit != 1 || states[1].Limit != -1 {
		t.Errorf("limits = %d, %d; want A limited by link 1 and B by nothing", states[0].Limit, states[1].Limit)
	}
}

func TestJointMargin(t *testing.T) {
	one := []Demand{{Path: []int{0}, Layers: seed000Layers}}
	exact := []Link{{Available: mbps(2.4)}}
	if got := step(noMargin(), exact, one)[0].Layers; got != 3 {
		t.Errorf("no margin: %d layers in exactly 2.4 Mbit/s, want 3", got)
	}
	if got := step(DefaultConfig(), exact, one)[0].Layers; got != 2 {
		t.Errorf("10%% margin: %d layers in 2.4 Mbit/s, want 2 (3 need 2.64)", got)
	}
	// Seed 000's experiment 2 with four sessions on 10 Mbit/s: 9.6 Mbit/s fits exactly, but not
	// with room for scene changes, so one session loses its temporal layer.
	four := make([]Demand, 4)
	for i := range four {
		four[i] = Demand{Path: []int{0}, Layers: seed000Layers}
	}
	ten := []Link{{Available: mbps(10)}}
	if got := layersOf(step(noMargin(), ten, four)); !equalInts(got, []int{3, 3, 3, 3}) {
		t.Errorf("no margin: %v, want [3 3 3 3]", got)
	}
	got := layersOf(step(DefaultConfig(), ten, four))
	if !equalInts(got, []int{3, 3, 3, 2}) {
		t.Errorf("10%% margin: %v, want [3 3 3 2]", got)
	}
}

func TestKeepBase(t *testing.T) {
	links := []Link{{Available: mbps(1)}}
	demands := []Demand{{Path: []int{0}, Layers: seed000Layers}, {Path: []int{0}, Layers: seed000Layers}}
	states := step(DefaultConfig(), links, demands)
	if got := layersOf(states); !equalInts(got, []int{1, 1}) {
		t.Fatalf("keep base: %v, want [1 1]", got)
	}
	if states[0].Over || !states[1].Over || states[1].Limit != 0 {
		t.Errorf("only the second base is over capacity: got %+v / %+v", states[0], states[1])
	}
	cfg := DefaultConfig()
	cfg.KeepBase = false
	if got := layersOf(step(cfg, links, demands)); !equalInts(got, []int{1, 0}) {
		t.Errorf("without keep base: %v, want [1 0]", got)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Config){
		func(c *Config) { c.Mode = "greedy" },
		func(c *Config) { c.Margin = -0.1 },
		func(c *Config) { c.KeepMargin = 11 },
		func(c *Config) { c.Hold = -time.Second },
		func(c *Config) { c.HoldMax = time.Second; c.Hold = 2 * time.Second },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
}

func TestStepAllocatesNothingOnceWarm(t *testing.T) {
	links := []Link{{Available: mbps(10)}, {Available: mbps(3)}}
	demands := make([]Demand, 8)
	for i := range demands {
		demands[i] = Demand{Path: []int{0, i % 2}, Layers: seed000Layers}
	}
	states := make([]State, len(demands))
	a := New(DefaultConfig())
	a.Step(0, links, demands, states)
	now := time.Duration(0)
	if n := testing.AllocsPerRun(50, func() { now += 100 * time.Millisecond; a.Step(now, links, demands, states) }); n != 0 {
		t.Errorf("Step allocates %.1f times per call", n)
	}
}
