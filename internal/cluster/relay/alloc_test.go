//go:build !race

// The race detector's instrumentation allocates on its own (and empties sync.Pools at random);
// these tests run in the plain pass.

package relay

import (
	"testing"
	"time"
)

// The whole path of a packet — the origin's sink, Pion's SRTP (or the plain socket) on both
// sides, the edge's reader and Receiver — allocates nothing.
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
			// Background work may land in one measurement (the link's SCTP association, set up
			// for its data channel after the link connects; ICE keepalives; a GC emptying pools);
			// an allocation per packet shows in every one.
			var counts []float64
			for range 3 {
				n := testing.AllocsPerRun(500, send)
				if n == 0 {
					break
				}
				counts = append(counts, n)
				t.Logf("%s audio %v: %v allocations per packet in one measurement", tr, audio, n)
			}
			if len(counts) == 3 {
				t.Fatalf("allocations per packet through the relay (%s, audio %v): %v", tr, audio, counts)
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
