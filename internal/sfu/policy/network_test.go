package policy

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// netReplay runs a policy against a toy path for d, deciding every 50 ms, with the controller's
// decision for the (single) track given by net (a negative value: no decision). It returns the
// target after every decision, and how often padding was asked for.
func netReplay(pol Policy, path *toyPath, d time.Duration, net func(time.Duration) int) (targets []Layer, probes int) {
	const tick = 50 * time.Millisecond
	tracks := []Track{camera()}
	var out Output
	usage := cc.Bitrate(0)
	for now := time.Duration(0); now <= d; now += tick {
		est, congested, loss := path.step(now, tick, usage+out.Probe)
		k := net(now)
		tracks[0].NetLayers, tracks[0].NetKnown = k, k >= 0
		in := Input{Now: now, Path: Path{Estimate: est, Received: path.received, FeedbackLoss: path.feedbackLoss, LossKnown: true,
			Congested: congested, RTT: 50 * time.Millisecond}, Loss: loss, CanProbe: true, Tracks: tracks}
		pol.Decide(&in, &out)
		if out.Probe > 0 {
			probes++
		}
		tracks[0].Target, tracks[0].Current = out.Targets[0], out.Targets[0]
		p := newPlan(tracks)
		usage = p.usage(p.fromTargets(tracks))
		targets = append(targets, out.Targets[0])
	}
	return targets, probes
}

// rungOf is the index of l on camera()'s ladder (-1 when it is not on it).
func rungOf(l Layer) int {
	tr := camera()
	for i, r := range ladder(&tr) {
		if r.layer == l {
			return i
		}
	}
	return -1
}

func TestNetworkFollowsTheController(t *testing.T) {
	// The controller allows 3 rungs, then 1, then 0 (the policy still keeps the base), then all 9.
	net := func(now time.Duration) int {
		switch {
		case now < 5*time.Second:
			return 3
		case now < 10*time.Second:
			return 1
		case now < 15*time.Second:
			return 0
		}
		return 9
	}
	path := &toyPath{capacity: constant(200 * cc.Kbps), est: 100 * cc.Kbps} // the estimate disagrees: ignored
	targets, probes := netReplay(NewNetwork(DefaultBWEConfig()), path, 20*time.Second, net)
	for i, l := range targets {
		now := time.Duration(i) * 50 * time.Millisecond
		want := max(0, net(now)-1)
		if got := rungOf(l); got != want {
			t.Fatalf("at %v: target %v (rung %d), want rung %d", now, l, got, want)
		}
	}
	if probes != 0 {
		t.Fatalf("network policy asked for padding %d times; the controller already knows the path", probes)
	}
}

func TestNetworkFallsBackToBWEWithoutADecision(t *testing.T) {
	none := func(time.Duration) int { return -1 }
	a, _ := netReplay(NewNetwork(DefaultBWEConfig()), &toyPath{capacity: constant(700 * cc.Kbps), est: 300 * cc.Kbps}, 20*time.Second, none)
	b, _ := netReplay(NewBWE(DefaultBWEConfig()), &toyPath{capacity: constant(700 * cc.Kbps), est: 300 * cc.Kbps}, 20*time.Second, none)
	if rungOf(a[len(a)-1]) < 1 {
		t.Fatalf("fallback never left the base layer: %v", a[len(a)-1])
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("decision %d: network without a controller chose %v, bwe %v", i, a[i], b[i])
		}
	}
}

func TestHybridTakesTheLowerOfControllerAndEstimate(t *testing.T) {
	// 0–20 s: the controller allows everything, but the path beyond its view carries 400 kbit/s:
	// the estimate limits. 20–30 s: the controller allows 2 rungs while the estimate would allow
	// more: the controller limits.
	net := func(now time.Duration) int {
		if now < 20*time.Second {
			return 9
		}
		return 2
	}
	capacity := func(now time.Duration) cc.Bitrate {
		if now < 20*time.Second {
			return 400 * cc.Kbps
		}
		return 5 * cc.Mbps
	}
	targets, _ := netReplay(NewHybrid(DefaultBWEConfig()), &toyPath{capacity: capacity, est: 300 * cc.Kbps}, 30*time.Second, net)
	tr := camera()
	rates := ladder(&tr)
	over := 0
	for i := 100; i < 400; i++ { // 5–20 s, once the estimate has settled
		if rates[rungOf(targets[i])].rate > 400*cc.Kbps {
			over++
		}
	}
	if over > 20 { // a failed upgrade may show for a moment; not for more than a second in 15
		t.Fatalf("hybrid sat above the 400 kbit/s path for %d of 300 decisions", over)
	}
	if r := rungOf(targets[100]); r < 1 {
		t.Fatalf("hybrid stuck at the base with 400 kbit/s available: %v", targets[100])
	}
	for i := 401; i < len(targets); i++ {
		if r := rungOf(targets[i]); r > 1 {
			t.Fatalf("at %v hybrid chose rung %d above the controller's 2 layers", time.Duration(i)*50*time.Millisecond, r)
		}
	}
	if r := rungOf(targets[len(targets)-1]); r != 1 {
		t.Fatalf("hybrid ended at rung %d, want the controller's 2 layers (rung 1)", r)
	}
	if NewHybrid(BWEConfig{}).Name() != NameHybrid || NewNetwork(BWEConfig{}).Name() != NameNetwork {
		t.Fatal("names")
	}
}

// TestHybridFollowsAnEnforcedDecision: a switch enforcing the controller's decision drops layers,
// which the subscriber's feedback reports as loss. The hybrid policy takes the lower of the
// decision and the estimate, except for an enforced track: it then follows the decision, and does
// not probe.
func TestHybridFollowsAnEnforcedDecision(t *testing.T) {
	tracks := []Track{camera()}
	tracks[0].NetLayers, tracks[0].NetKnown = 7, true
	in := Input{Now: time.Second, Path: Path{Estimate: 100 * cc.Kbps, FeedbackLoss: 0.3, LossKnown: true, Congested: true}, Loss: 0.3,
		CanProbe: true, Tracks: tracks}
	var out Output
	h := NewHybrid(BWEConfig{})
	h.Decide(&in, &out)
	if rungOf(out.Targets[0]) >= 6 {
		t.Fatalf("hybrid, not enforced: %v on a 100 kbit/s estimate with loss, want below the decision's rung 6", out.Targets[0])
	}
	tracks[0].Enforced, tracks[0].Target = true, out.Targets[0]
	for range 3 {
		in.Now += 50 * time.Millisecond
		h.Decide(&in, &out)
		tracks[0].Target = out.Targets[0]
	}
	if got := rungOf(out.Targets[0]); got != 6 || out.Probe != 0 {
		t.Fatalf("hybrid, enforced: rung %d (%v), probe %v; want the decision's rung 6 and no probe", got, out.Targets[0], out.Probe)
	}
}
