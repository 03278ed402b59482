package policy

import (
	"testing"

	"github.com/strata-rtc/strata/cc"
)

// simulcastRates is three simulcast layers (150k, 500k, 1.5M at the top temporal layer) whose
// temporal layers cost 50 % and 75 % of the full rate.
func simulcastRates() Rates {
	var r Rates
	for s, full := range []cc.Bitrate{150 * cc.Kbps, 500 * cc.Kbps, 1500 * cc.Kbps} {
		r[s] = [MaxTemporal]cc.Bitrate{full / 2, full * 3 / 4, full}
	}
	return r
}

func camera() Track {
	return Track{Rates: simulcastRates(), Max: TopLayer, Target: NoLayer, Current: NoLayer}
}

func TestLadderSkipsUnavailableAndDominatedLayers(t *testing.T) {
	tr := camera()
	tr.Rates[1] = [MaxTemporal]cc.Bitrate{} // the publisher stopped sending h
	tr.Rates[2][0] = 100 * cc.Kbps          // cheaper than s0t2: never worth switching to
	l := ladder(&tr)
	var got []Layer
	for _, r := range l {
		got = append(got, r.layer)
	}
	want := []Layer{{0, 0}, {0, 1}, {0, 2}, {2, 1}, {2, 2}}
	if len(got) != len(want) {
		t.Fatalf("ladder %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ladder %v, want %v", got, want)
		}
	}
	tr.Max = Layer{0, 1}
	if l := ladder(&tr); len(l) != 2 || l[1].layer != (Layer{0, 1}) {
		t.Fatalf("caps not honoured: %v", l)
	}
	tr.Paused = true
	if l := ladder(&tr); l != nil {
		t.Fatal("paused track has a ladder")
	}
	fresh := Track{Max: TopLayer}
	if l := ladder(&fresh); len(l) != 1 || l[0].layer != (Layer{0, 2}) {
		t.Fatalf("unmeasured track: %v", l)
	}
}

func TestAllocateBaseFirstScreenFirst(t *testing.T) {
	screen := camera()
	screen.Screen = true
	tracks := []Track{camera(), camera(), screen}
	p := newPlan(tracks)
	// Below the sum of the base layers every track still gets its base.
	a := p.allocate(10 * cc.Kbps)
	for i, r := range a {
		if r != 0 {
			t.Fatalf("track %d at rung %d with a tiny budget", i, r)
		}
	}
	// 3 × 75k base = 225k; the 1075k left go to the screen share first: up to s2t1 (1125k, i.e.
	// 1050k more); the 25k left do not buy a camera rung.
	a = p.allocate(1300 * cc.Kbps)
	got := p.layers(a, nil)
	if got[2] != (Layer{2, 1}) || got[0] != (Layer{0, 0}) || got[1] != (Layer{0, 0}) {
		t.Fatalf("got %v, want the screen share at s2t1 and cameras at base", got)
	}
	if u := p.usage(a); u > 1300*cc.Kbps {
		t.Fatalf("allocation %v exceeds the budget", u)
	}
	// Cameras share round-robin: 2 × 250k buys both s1t0, not one s1t2 and one base.
	cams := newPlan([]Track{camera(), camera()})
	if got := cams.layers(cams.allocate(500*cc.Kbps), nil); got[0] != (Layer{1, 0}) || got[1] != (Layer{1, 0}) {
		t.Fatalf("cameras not shared fairly: %v", got)
	}
	// The step order hands out every screen rung before any camera rung.
	steps := p.steps()
	for k, i := range steps {
		if i != 2 && k < len(p.ladders[2])-1 {
			t.Fatalf("camera rung handed out at step %d before the screen share was done", k)
		}
	}
	if lv := p.levelOf(p.level(5)); lv != 5 {
		t.Fatalf("levelOf(level(5)) = %d", lv)
	}
}
