package flows

import (
	"runtime"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo/topotest"
)

// The flow tests run over the emulator's own network (topo): a source host
// on node a and a destination host on node b, joined by an emulated link each
// way through the user-space link emulator.

// newPair builds the two hosts over a link of rate bit/s each way with a
// one-way delay and a drop-tail queue of queue packets, and returns them;
// the network is removed when the test ends.
func newPair(t *testing.T, rate float64, delay time.Duration, queue int) (src, dst endpoint.Host) {
	t.Helper()
	n := topotest.Pair(t, rate, delay, queue, "", time.Minute)
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
