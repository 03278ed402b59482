package flows

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/sim"
)

// The flow tests run over the emulator's own network (topo): a source host
// on node a and a destination host on node b, joined by an emulated link each
// way through the user-space link emulator.

// newPair builds the two hosts over a link of rate bit/s each way with a
// one-way delay and a drop-tail queue of queue packets, and returns them;
// the network is removed when the test ends.
func newPair(t *testing.T, rate float64, delay time.Duration, queue int) (src, dst endpoint.Host) {
	t.Helper()
	emutest.NeedRoot(t)
	link := func(name, from, to string) sim.LinkConfig {
		return sim.LinkConfig{Name: name, From: from, To: to, Rate: sim.ConstantRate(rate), Delay: delay,
			Queue: sim.Limit{Unit: sim.LimitPackets, Value: float64(queue)}}
	}
	n, err := topo.Build(context.Background(), topo.Spec{
		Links:    []sim.LinkConfig{link("ab", "a", "b"), link("ba", "b", "a")},
		Hosts:    []topo.HostSpec{{Name: "src", Node: "a"}, {Name: "dst", Node: "b"}},
		Flows:    []topo.FlowSpec{{Name: "f", Src: "src", Dst: "dst", Path: []string{"a", "b"}}},
		Duration: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	n.Start(time.Now())
	return n.Host("src"), n.Host("dst")
}

// goroutinesBack fails the test unless the goroutine count falls back to
// before within a second: a stopped flow leaves nothing running.
func goroutinesBack(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines after Stop, %d before Start", runtime.NumGoroutine(), before)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
