package topo

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/sim"
)

// twoNodes builds a → b over ab and back over a plain 100 Mbit/s link, with
// hosts ha and hb and the flow f from ha to hb, closing it with the test.
func twoNodes(t testing.TB, ab sim.LinkConfig, dur time.Duration) *Network {
	t.Helper()
	emutest.NeedRoot(t)
	ab.Name, ab.From, ab.To = "ab", "a", "b"
	spec := Spec{
		Links: []sim.LinkConfig{ab,
			{Name: "ba", From: "b", To: "a", Rate: sim.ConstantRate(100e6), Delay: ab.Delay}},
		Hosts:    []HostSpec{{"ha", "a"}, {"hb", "b"}},
		Flows:    []FlowSpec{{Name: "f", Src: "ha", Dst: "hb", Path: []string{"a", "b"}}},
		Duration: dur, Interval: 100 * time.Millisecond, Seed: 7,
	}
	n, err := Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}
