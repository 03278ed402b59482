package service

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// TestGovernorCapsOnlyAfterCongestion: no cap until the media's estimator sees congestion; then
// the estimate minus the media; a cap that rises by capRamp a second once the congestion is
// over, and is lifted when the transfer no longer uses it.
func TestGovernorCapsOnlyAfterCongestion(t *testing.T) {
	t0 := time.Unix(0, 0)
	g := governor{cap: uncapped, last: t0}
	calm := policy.Path{Estimate: 1200 * cc.Kbps, Received: 1000 * cc.Kbps}
	if c := g.next(calm, t0.Add(time.Second), 500*cc.Kbps); c != uncapped {
		t.Fatalf("capped at %v before any congestion", c)
	}
	congested := calm
	congested.Congested = true
	if c := g.next(congested, t0.Add(2*time.Second), 500*cc.Kbps); c != 200*cc.Kbps {
		t.Fatalf("congested: cap %v, want estimate − media = 200 kbit/s", c)
	}
	over := policy.Path{Estimate: 800 * cc.Kbps, Received: 1000 * cc.Kbps, Overload: true}
	if c := g.next(over, t0.Add(3*time.Second), 200*cc.Kbps); c != 0 {
		t.Fatalf("overload with the media above the estimate: cap %v, want 0 (dc raises it to MinCap)", c)
	}
	if c := g.next(calm, t0.Add(5*time.Second), 16*cc.Kbps); c != 2*capRamp {
		t.Fatalf("2 s after the congestion: cap %v, want %v", c, 2*capRamp)
	}
	if c := g.next(calm, t0.Add(10*time.Second), 20*cc.Kbps); c != uncapped {
		t.Fatalf("cap %v, more than capSlack above the transfer's 20 kbit/s: want it lifted", c)
	}
	idle := congested
	idle.Received = 0
	if c := g.next(idle, t0.Add(7*time.Second), 0); c != uncapped {
		t.Fatalf("no media acknowledged: cap %v, want none", c)
	}
}
