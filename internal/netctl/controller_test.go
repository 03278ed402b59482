package netctl

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/alloc"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// testTopology is seed 000's experiment 1 plus a second receiver behind a switch, and a node that
// can be reached only one way.
const testTopology = `name: test
nodes:
  - london
  - {name: paris, enforcer: true}
  - madrid
  - {name: sw, enforcer: true}
  - milano
  - island
links:
  - {from: london, to: paris, capacity: 100Mbps, duplex: true}
  - {name: pm, from: paris, to: madrid, capacity: 2Mbps, delay: 6ms, duplex: true}
  - {name: ps, from: paris, to: sw, capacity: 10Mbps, duplex: true}
  - {name: sm, from: sw, to: milano, capacity: 3Mbps, duplex: true}
  - {name: to-island, from: paris, to: island, capacity: 1Mbps}
`

var paperLayers = []api.Layer{{RateBps: 600_000, SSRC: 11}, {RateBps: 600_000, SSRC: 12}, {RateBps: 1_200_000, SSRC: 13}}

func newTestController(t *testing.T, mutate func(*Config), opts ...Option) *Controller {
	t.Helper()
	top, err := topo.Parse("test.yaml", []byte(testTopology))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := New(top, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func layersAt(t *testing.T, c *Controller, sub string) int {
	t.Helper()
	d, ok := c.Decision(sub)
	if !ok {
		t.Fatalf("no decision for %s", sub)
	}
	return d.Layers
}

func mbps(f float64) cc.Bitrate { return cc.BitrateFromFloat(f * 1e6) }

func TestControllerDecidesPerPath(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "to-madrid", Stream: "cam", Receiver: "madrid"}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "to-milano", Stream: "cam", Path: []string{"ps", "sm"}}))
	changed := c.Update(0)
	if len(changed) != 2 {
		t.Fatalf("first update: %d changed decisions, want 2", len(changed))
	}
	// 2 Mbit/s: base + spatial (1.32 with margin), not temporal (2.64). 3 Mbit/s: all three.
	if got := layersAt(t, c, "to-madrid"); got != 2 {
		t.Errorf("madrid: %d layers, want 2", got)
	}
	if got := layersAt(t, c, "to-milano"); got != 3 {
		t.Errorf("milano: %d layers, want 3", got)
	}
	d, _ := c.Decision("to-madrid")
	if d.Limit != "pm" || d.PathAvailableBps != 2_000_000 || d.RateBps != 1_200_000 || d.Receiver != "madrid" {
		t.Errorf("madrid decision %+v", d)
	}
	sub, _ := c.Subscription("to-milano")
	if sub.Receiver != "milano" || sub.Computed {
		t.Errorf("explicit path: %+v", sub)
	}
	if len(c.Update(100*time.Millisecond)) != 0 {
		t.Error("an update with nothing new changed decisions")
	}
}

func TestControllerLinkLoadAndStaleness(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	// The measured load includes our 1.2 Mbit/s: 0.5 Mbit/s of background leaves 1.5, enough to
	// keep two layers.
	now := 10 * time.Second
	mustOK(t, c.SetLinkLoad("pm", mbps(1.7), now))
	c.Update(now)
	if got := layersAt(t, c, "s"); got != 2 {
		t.Fatalf("0.5 Mbit/s background: %d layers, want 2", got)
	}
	ls := linkState(c, "pm")
	if ls.BackgroundBps != 500_000 || ls.ManagedBps != 1_200_000 || ls.AvailableBps != 1_500_000 || ls.Source != "in-process" {
		t.Fatalf("link state %+v", ls)
	}
	// 1.2 Mbit/s of background: 0.8 left, one layer, at once.
	now += time.Second
	mustOK(t, c.SetLinkLoad("pm", mbps(2.4), now))
	c.Update(now)
	if got := layersAt(t, c, "s"); got != 1 {
		t.Fatalf("1.2 Mbit/s background: %d layers, want 1", got)
	}
	// No more reports: after StaleAfter the static capacity applies, and after the hold the
	// second layer comes back.
	for now < 11*time.Second+c.Config().StaleAfter+c.Config().Alloc.Hold+time.Second {
		now += 100 * time.Millisecond
		c.Update(now)
	}
	if ls := linkState(c, "pm"); ls.Source != "static" || ls.BackgroundBps != 0 {
		t.Fatalf("stale link state %+v", ls)
	}
	if got := layersAt(t, c, "s"); got != 2 {
		t.Fatalf("after the report went stale: %d layers, want 2", got)
	}
}

func linkState(c *Controller, name string) api.LinkState {
	for _, l := range c.Links() {
		if l.Name == name {
			return l
		}
	}
	return api.LinkState{}
}

func TestControllerSettleAvoidsCascade(t *testing.T) {
	// 10 Mbit/s with all three layers (2.4). Background jumps to 8 Mbit/s: 2 left, two layers. The counters keep showing the old 2.4 of ours for a while; without Settle the
	// controller would take that for background too and cut to one layer.
	run := func(settle time.Duration) int {
		c := newTestController(t, func(cfg *Config) { cfg.Settle = settle })
		mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
		mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Path: []string{"ps"}}))
		c.Update(0)
		now := time.Second
		mustOK(t, c.SetLinkLoad("ps", mbps(2.4+8), now))
		c.Update(now)
		if got := layersAt(t, c, "s"); got != 2 {
			t.Fatalf("settle %v: %d layers after the jump, want 2", settle, got)
		}
		// A second sample over the same (stale-traffic) interval.
		now += 500 * time.Millisecond
		mustOK(t, c.SetLinkLoad("ps", mbps(2.4+8), now))
		c.Update(now)
		return layersAt(t, c, "s")
	}
	if got := run(DefaultConfig().Settle); got != 2 {
		t.Errorf("with settle: %d layers, want 2", got)
	}
	if got := run(0); got != 1 {
		t.Errorf("without settle the old traffic looks like background: %d layers, want 1 (the cascade this avoids)", got)
	}
}

func TestControllerCapacityOverride(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	mustOK(t, c.SetLinkCapacity("pm", mbps(10)))
	var now time.Duration
	for ; layersAt(t, c, "s") != 3 && now < 10*time.Second; now += 100 * time.Millisecond {
		c.Update(now)
	}
	if now < c.Config().Alloc.Hold || now > c.Config().Alloc.Hold+time.Second {
		t.Errorf("upgrade after %v, want after the %v hold", now, c.Config().Alloc.Hold)
	}
	mustOK(t, c.SetLinkCapacity("pm", 0)) // back to 2 Mbit/s
	c.Update(now)
	if got := layersAt(t, c, "s"); got != 2 {
		t.Errorf("after reset: %d layers, want 2", got)
	}
	if err := c.SetLinkCapacity("nope", mbps(1)); err == nil {
		t.Error("unknown link accepted")
	}
}

type recordingEnforcer struct {
	mu    sync.Mutex
	rules map[string][]api.Rule
	calls int
}

func (r *recordingEnforcer) ApplyRules(node string, rules []api.Rule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rules == nil {
		r.rules = map[string][]api.Rule{}
	}
	r.rules[node] = rules
	r.calls++
}

func TestControllerRules(t *testing.T) {
	rec := &recordingEnforcer{}
	c := newTestController(t, nil, WithEnforcer(rec))
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	rules := c.Rules().Rules("paris")
	if len(rules.Rules) != 1 || rules.Version == 0 {
		t.Fatalf("paris rules %+v", rules)
	}
	r := rules.Rules[0]
	if r.Link != "pm" || r.Allow != 2 || r.Layers != 3 || len(r.DropSSRCs) != 1 || r.DropSSRCs[0] != 13 || !r.Drops(2) || r.Drops(1) {
		t.Fatalf("rule %+v", r)
	}
	if !c.Rules().Drops("paris", "s", 2) || c.Rules().Drops("paris", "s", 1) || c.Rules().Drops("sw", "s", 2) {
		t.Fatal("RuleTable.Drops disagrees with the rule")
	}
	calls := rec.calls
	c.Update(time.Second)
	if rec.calls != calls {
		t.Error("unchanged rules were applied again")
	}
	mustOK(t, c.DeleteSubscription("s"))
	c.Update(2 * time.Second)
	if got := rec.rules["paris"]; got == nil || len(got) != 0 {
		t.Fatalf("after the delete paris should get an empty rule set, got %v", got)
	}
	if _, ok := c.Rules().Allowed("paris", "s"); ok {
		t.Fatal("rule table still has the deleted subscription")
	}
	if n := testing.AllocsPerRun(100, func() { c.Rules().Drops("paris", "s", 1) }); n != 0 {
		t.Errorf("Drops allocates %.0f times", n)
	}
}

func TestControllerErrors(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	cases := []struct {
		name string
		err  error
		code string
	}{
		{"unknown source", c.PutStream(api.Stream{ID: "x", Source: "rome", Layers: paperLayers}), api.CodeUnknownNode},
		{"negative rate", c.PutStream(api.Stream{ID: "x", Source: "paris", Layers: []api.Layer{{RateBps: -1}}}), api.CodeBadRate},
		{"no layers", c.PutStream(api.Stream{ID: "x", Source: "paris"}), api.CodeBadRequest},
		{"bad id", c.PutStream(api.Stream{ID: "a/b", Source: "paris", Layers: paperLayers}), api.CodeBadID},
		{"unknown stream", c.PutSubscription(api.Subscription{ID: "s", Stream: "nope", Receiver: "madrid"}), api.CodeUnknownStream},
		{"unknown receiver", c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "rome"}), api.CodeUnknownNode},
		{"no receiver", c.PutSubscription(api.Subscription{ID: "s", Stream: "cam"}), api.CodeBadRequest},
		{"path from elsewhere", c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Path: []string{"sm"}}), api.CodeBadPath},
		{"unknown link", c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Path: []string{"pm", "zz"}}), api.CodeBadPath},
		{"no route", c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "london"}), ""},
		{"delete unknown", c.DeleteSubscription("nope"), api.CodeUnknownSubscription},
		{"layers of unknown", c.SetLayers("nope", paperLayers), api.CodeUnknownStream},
		{"unknown link load", c.SetLinkLoad("zz", 1, 0), api.CodeUnknownLink},
	}
	for _, tc := range cases {
		if tc.name == "no route" {
			// london is reachable (paris->london exists): this one must succeed.
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		var e *Error
		if !errors.As(tc.err, &e) || e.Code != tc.code || e.Status < 400 || e.Status >= 500 {
			t.Errorf("%s: got %v, want a 4xx %s", tc.name, tc.err, tc.code)
		}
	}
	top, _ := topo.Parse("t.yaml", []byte("nodes: [a, b]\nlinks:\n  - {from: a, to: b, capacity: 1Mbps}\n"))
	oneWay, _ := New(top, DefaultConfig())
	mustOK(t, oneWay.PutStream(api.Stream{ID: "cam", Source: "b", Layers: paperLayers}))
	var e *Error
	if err := oneWay.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "a"}); !errors.As(err, &e) || e.Code != api.CodeNoPath || e.Status != http.StatusBadRequest {
		t.Errorf("one-way link: got %v, want no_path", err)
	}
}

func TestControllerSourceChangeReroutes(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid"}))
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "london", Layers: paperLayers}))
	if sub, _ := c.Subscription("s"); len(sub.Path) != 2 || sub.Path[0] != "london->paris" {
		t.Fatalf("rerouted path %v", sub.Path)
	}
	mustOK(t, c.PutSubscription(api.Subscription{ID: "e", Stream: "cam", Path: []string{"london->paris", "pm"}}))
	var e *Error
	if err := c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}); !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Fatalf("explicit path cannot start at the new source: got %v, want 409", err)
	}
	if st, _ := c.Stream("cam"); st.Source != "london" {
		t.Fatalf("a refused change changed the source to %s", st.Source)
	}
}

func TestWatcherGetsSnapshotThenChanges(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "a", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	w := c.Watch(16)
	defer w.Close()
	if e := <-w.Events(); e.Type != api.EventSnapshot || len(e.Snapshot.Decisions) != 1 {
		t.Fatalf("first event %+v, want a snapshot with one decision", e)
	}
	mustOK(t, c.SetLinkCapacity("pm", mbps(1)))
	c.Update(time.Second)
	if e := <-w.Events(); e.Type != api.EventDecision || e.Decision.Subscription != "a" || e.Decision.Layers != 1 {
		t.Fatalf("after the capacity drop: %+v", e)
	}
	mustOK(t, c.DeleteStream("cam"))
	c.Update(2 * time.Second)
	if e := <-w.Events(); e.Type != api.EventRemoved || e.Removed.Subscription != "a" {
		t.Fatalf("after the stream was deleted: %+v, want the subscription removed", e)
	}
	if len(c.Subscriptions()) != 0 || len(c.Decisions().Decisions) != 0 {
		t.Fatal("deleting the stream left its subscription")
	}
}

func TestSlowWatcherIsDropped(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
	w := c.Watch(2) // holds the snapshot and one more
	for i := range 5 {
		mustOK(t, c.PutSubscription(api.Subscription{ID: string(rune('a' + i)), Stream: "cam", Receiver: "madrid"}))
		c.Update(time.Duration(i) * time.Second)
	}
	n := 0
	for range w.Events() {
		n++
	}
	if n != 2 {
		t.Fatalf("read %d events before the channel closed, want 2", n)
	}
	w.Close() // closing a dropped watcher is harmless
}

func TestPaperModeInController(t *testing.T) {
	// Two receivers behind the same 2 Mbit/s link: Algorithm 1 per path lets both take two
	// layers (2.4 Mbit/s); the joint allocation gives both a base layer and one of them the
	// second (1.98 Mbit/s with the margin).
	for _, tc := range []struct {
		mode string
		a, b int
	}{{alloc.ModePaper, 2, 2}, {alloc.ModeJoint, 2, 1}} {
		c := newTestController(t, func(cfg *Config) { cfg.Alloc.Mode = tc.mode })
		mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: paperLayers}))
		mustOK(t, c.PutSubscription(api.Subscription{ID: "a", Stream: "cam", Receiver: "madrid"}))
		mustOK(t, c.PutSubscription(api.Subscription{ID: "b", Stream: "cam", Receiver: "madrid"}))
		c.Update(0)
		if a, b := layersAt(t, c, "a"), layersAt(t, c, "b"); a != tc.a || b != tc.b {
			t.Errorf("%s: %d and %d layers, want %d and %d", tc.mode, a, b, tc.a, tc.b)
		}
	}
}
