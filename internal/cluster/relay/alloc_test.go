//go:build !race

// The race detector's instrumentation allocates on its own (and empties sync.Pools at random);
// these tests run in the plain pass.

package relay

import (
	"testing"
	"time"
)

// The whole path of a packet — the origin's sink, Pion's SRTP on both sides, the edge's reader
// and Receiver — allocates nothing (the background work of ICE and the NACK ticker is averaged
// away over the runs).
func TestPacketPathAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up a link")
	}
	for _, tr := range []string{"srtp", "rtp"} {
		for _, audio := range []bool{false, true} {
			send := linkedPair(t, tr, audio)
			for range 50 {
				send()
			}
			if n := testing.AllocsPerRun(500, send); n != 0 {
				t.Fatalf("%v allocations per packet through the relay (%s, audio %v)", n, tr, audio)
			}
		}
	}
}

func TestLossTrackerAllocatesNothing(t *testing.T) {
	var lt lossTracker
	out := make([]uint16, 0, maxMissing)
	seq, now := uint16(0), time.Duration(0)
	if n := testing.AllocsPerRun(1000, func() {
		seq += 2
		now += time.Millisecond
		lt.received(seq, now)
		out = lt.due(now, 10*time.Millisecond, out[:0])
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
