//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// only meaningful without it.

package topo

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// TestObserverAllocatesNothingPerPacket: classifying a packet, carrying its
// queueing across two hops and counting it allocates nothing (beyond the
// flow's growing QueueDelays, grown here beforehand). No root needed: the
// network is planned, not built.
func TestObserverAllocatesNothingPerPacket(t *testing.T) {
	n := planned(t)
	hop0, hop1 := &linkObserver{net: n, link: 0}, &linkObserver{net: n, link: 1}
	pkt := make([]byte, 100)
	pkt[0], pkt[3] = 0x45, 100
	copy(pkt[12:16], n.hosts["ha"].addr.AsSlice())
	copy(pkt[16:20], n.hosts["hb"].addr.AsSlice())
	f := n.flows["f"]
	f.stats.QueueDelays = make([]float32, 0, 10000)
	a := sim.Admission{Verdict: sim.Admitted, Wait: time.Millisecond}
	cycle := func() {
		tag := hop0.Admit(pkt, 0, a)
		hop0.Deliver(pkt, 0, 0, tag)
		tag = hop1.Admit(pkt, 0, a)
		hop1.Deliver(pkt, 0, 0, tag)
	}
	cycle()
	if allocs := testing.AllocsPerRun(1000, cycle); allocs != 0 {
		t.Fatalf("%v allocations per packet", allocs)
	}
	st, err := n.localFlow("f")
	if err != nil {
		t.Fatal(err)
	}
	if st.SentPackets != 1002 || st.RecvPackets != 1002 || st.QueueDelays[0] != 0.002 || st.Unmatched != 0 {
		t.Fatalf("sent %d, delivered %d, first queueing %v s, %d unmatched", st.SentPackets, st.RecvPackets, st.QueueDelays[0], st.Unmatched)
	}
}
