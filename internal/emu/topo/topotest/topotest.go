// Package topotest builds the smallest emulated network tests need to carry real traffic through
// the user-space link emulator: two hosts and a link each way.
package topotest

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/sim"
)

// Pair builds host "src" on node a and host "dst" on node b, joined by a link each way of rate
// bit/s with a one-way delay and a drop-tail queue of queue packets, and one flow "f" of kind
// from src to dst (whose statistics the network keeps) lasting at most dur. The network is not
// started; it is removed when the test ends. It needs root.
func Pair(t testing.TB, rate float64, delay time.Duration, queue int, kind string, dur time.Duration) *topo.Network {
	t.Helper()
	emutest.NeedRoot(t)
	link := func(name, from, to string) sim.LinkConfig {
		return sim.LinkConfig{Name: name, From: from, To: to, Rate: sim.ConstantRate(rate), Delay: delay,
			Queue: sim.Limit{Unit: sim.LimitPackets, Value: float64(queue)}}
	}
	n, err := topo.Build(context.Background(), topo.Spec{
		Links:    []sim.LinkConfig{link("ab", "a", "b"), link("ba", "b", "a")},
		Hosts:    []topo.HostSpec{{Name: "src", Node: "a"}, {Name: "dst", Node: "b"}},
		Flows:    []topo.FlowSpec{{Name: "f", Src: "src", Dst: "dst", Path: []string{"a", "b"}, Kind: kind}},
		Duration: dur,
	})
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
