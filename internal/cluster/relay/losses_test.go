package relay

import (
	"slices"
	"testing"
	"time"
)

func TestLossTracker(t *testing.T) {
	const ms = time.Millisecond
	var lt lossTracker
	for _, seq := range []uint16{65533, 65534, 2, 3} { // 65535, 0 and 1 lost across the wrap
		lt.received(seq, 0)
	}
	if got := lt.due(2*ms, 50*ms, nil); len(got) != 0 {
		t.Fatalf("asked before the reorder wait: %v", got)
	}
	lt.received(0, 3*ms) // late, not lost
	if got := lt.due(10*ms, 50*ms, nil); !slices.Equal(got, []uint16{65535, 1}) {
		t.Fatalf("first NACK %v", got)
	}
	if got := lt.due(20*ms, 50*ms, nil); len(got) != 0 {
		t.Fatalf("asked again before the retry interval: %v", got)
	}
	lt.received(1, 30*ms) // retransmitted
	for i, at := range []time.Duration{60, 110} {
		if got := lt.due(at*ms, 50*ms, nil); !slices.Equal(got, []uint16{65535}) {
			t.Fatalf("request %d: %v", i+2, got)
		}
	}
	if got := lt.due(500*ms, 50*ms, nil); len(got) != 0 || lt.n != 0 {
		t.Fatalf("asked more than %d times: %v (%d tracked)", maxNACKs, got, lt.n)
	}
	// A jump beyond what is tracked (an outage) is not asked for packet by packet.
	lt.received(3+maxMissing+10, time.Second)
	if got := lt.due(2*time.Second, 50*ms, nil); len(got) != 0 {
		t.Fatalf("asked for an outage: %d packets", len(got))
	}
	// Old losses are forgotten.
	lt.received(3+maxMissing+12, 3*time.Second)
	if got := lt.due(3*time.Second+maxLossAge+ms, 50*ms, nil); len(got) != 0 || lt.n != 0 {
		t.Fatalf("asked for a loss older than %v: %v", maxLossAge, got)
	}
}
