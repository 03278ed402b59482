package netctl

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

var markedLayers = []api.Layer{{RateBps: 600_000, DSCP: 34}, {RateBps: 600_000, DSCP: 36}, {RateBps: 1_200_000, DSCP: 38}}

var testFlow = &api.Flow{Proto: "udp", Src: "10.0.0.1:5000", Dst: "10.0.0.2:6000"}

// TestRulesCarryFlowAndMarks: a subscription's flow and its stream's marks reach its rule, split
// at Allow; without a flow the rule has neither.
func TestRulesCarryFlowAndMarks(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: markedLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid", Flow: testFlow}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "t", Stream: "cam", Receiver: "madrid"}))
	c.Update(0)
	rules := c.Rules().Rules("paris").Rules
	if len(rules) != 2 {
		t.Fatalf("rules %+v", rules)
	}
	s, u := rules[0], rules[1]
	marks := []int{34, 36, 38}
	if s.Flow == nil || *s.Flow != *testFlow || s.Allow < 1 || s.Allow > 2 || !slices.Equal(s.PassDSCP, marks[:s.Allow]) || !slices.Equal(s.DropDSCP, marks[s.Allow:]) {
		t.Errorf("rule with a flow: %+v (2 Mbit/s on pm leaves no room for all layers)", s)
	}
	if u.Flow != nil || u.PassDSCP != nil || u.DropDSCP != nil {
		t.Errorf("rule without a flow: %+v", u)
	}
	if got, _ := c.Subscription("s"); got.Flow == nil || *got.Flow != *testFlow {
		t.Errorf("the subscription lost its flow: %+v", got)
	}
}

// TestSetEnforced: a decision is Enforced while the switch holds exactly its rule; every change of
// the flag is a decision event with a new sequence number.
func TestSetEnforced(t *testing.T) {
	c := newTestController(t, nil)
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: markedLayers}))
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid", Flow: testFlow}))
	c.Update(0)
	w := c.Watch(16)
	defer w.Close()
	<-w.Events() // snapshot
	d0, _ := c.Decision("s")
	if d0.Enforced {
		t.Fatal("enforced before any switch acknowledged")
	}
	installed := c.Rules().Rules("paris").Rules
	c.SetEnforced("paris", installed, nil)
	ev := <-w.Events()
	if ev.Type != api.EventDecision || !ev.Decision.Enforced || ev.Decision.Seq <= d0.Seq {
		t.Fatalf("after the acknowledgement: %+v", ev)
	}
	c.SetEnforced("paris", installed, nil) // the same again: no event
	c.SetEnforced("sw", nil, nil)          // another node's switch: no event
	select {
	case ev := <-w.Events():
		t.Fatalf("unexpected event %+v", ev)
	default:
	}

	// The path gets more room: the new decision is not enforced until the switch has its rule.
	mustOK(t, c.SetLinkCapacity("pm", 10_000_000))
	c.Update(10 * time.Second)
	c.Update(15 * time.Second) // after the hold
	d, _ := c.Decision("s")
	if d.Layers != 3 || d.Enforced {
		t.Fatalf("new decision %+v: want 3 layers, not enforced", d)
	}
	c.SetEnforced("paris", installed, nil) // a late acknowledgement of the old rules changes nothing
	if d, _ := c.Decision("s"); d.Enforced {
		t.Fatal("the old rules were taken for the new decision")
	}
	c.SetEnforced("paris", c.Rules().Rules("paris").Rules, nil)
	if d, _ := c.Decision("s"); !d.Enforced {
		t.Fatal("the new rules were acknowledged but the decision is not enforced")
	}
	c.SetEnforced("paris", nil, errors.New("switch unreachable"))
	if d, _ := c.Decision("s"); d.Enforced {
		t.Fatal("enforced although the switch failed")
	}
	c.Update(16 * time.Second) // Update keeps the flag as it is
	if d, _ := c.Decision("s"); d.Enforced || d.Layers != 3 {
		t.Fatalf("after Update: %+v", d)
	}
}

func TestFlowAndMarkValidation(t *testing.T) {
	c := newTestController(t, nil)
	bad := []api.Layer{{RateBps: 1, DSCP: 34}, {RateBps: 1, DSCP: 34}}
	if err := c.PutStream(api.Stream{ID: "x", Source: "paris", Layers: bad}); err == nil {
		t.Error("two layers with one mark accepted")
	}
	if err := c.PutStream(api.Stream{ID: "x", Source: "paris", Layers: []api.Layer{{RateBps: 1, DSCP: 64}}}); err == nil {
		t.Error("DSCP 64 accepted")
	}
	mustOK(t, c.PutStream(api.Stream{ID: "cam", Source: "paris", Layers: markedLayers}))
	for _, f := range []api.Flow{
		{Proto: "tcp", Src: "10.0.0.1:1", Dst: "10.0.0.2:2"},
		{Proto: "udp", Src: "10.0.0.1", Dst: "10.0.0.2:2"},
		{Proto: "udp", Src: "10.0.0.1:1", Dst: "[fd00::2]:2"},
		{Proto: "udp", Src: "0.0.0.0:1", Dst: "10.0.0.2:2"},
		{Proto: "udp", Src: "10.0.0.1:0", Dst: "10.0.0.2:2"},
		{Proto: "udp", Src: "[fe80::1%eth0]:1", Dst: "[fe80::2]:2"},
	} {
		if err := c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid", Flow: &f}); err == nil {
			t.Errorf("flow %+v accepted", f)
		}
	}
	mustOK(t, c.PutSubscription(api.Subscription{ID: "s", Stream: "cam", Receiver: "madrid", Flow: &api.Flow{Proto: "udp", Src: "[fd00::1]:1", Dst: "[fd00::2]:2"}}))
}
