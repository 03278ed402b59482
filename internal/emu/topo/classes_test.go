package topo

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// planned is a two-hop network a → r → b with flow "f" from ha to hb, planned but not built
// (no root needed): the observers count what the test hands them.
func planned(t *testing.T) *Network {
	t.Helper()
	n := &Network{spec: Spec{
		Links: []sim.LinkConfig{
			{Name: "ar", From: "a", To: "r", Rate: sim.ConstantRate(1e6)}, {Name: "rb", From: "r", To: "b", Rate: sim.ConstantRate(1e6)},
			{Name: "br", From: "b", To: "r", Rate: sim.ConstantRate(1e6)}, {Name: "ra", From: "r", To: "a", Rate: sim.ConstantRate(1e6)}},
		Hosts:    []HostSpec{{"ha", "a"}, {"hb", "b"}},
		Flows:    []FlowSpec{{Name: "f", Src: "ha", Dst: "hb", Path: []string{"a", "r", "b"}}},
		Duration: time.Second, Interval: 100 * time.Millisecond},
		nodes: map[string]*node{}, hosts: map[string]*Host{}, flows: map[string]*flowState{}, byPair: map[pairKey]route{}}
	if err := n.plan(); err != nil {
		t.Fatal(err)
	}
	return n
}

// ipPacket is a 100-byte IPv4 packet from src to dst with the TOS byte tos.
func ipPacket(n *Network, src, dst string, tos byte) []byte {
	pkt := make([]byte, 100)
	pkt[0], pkt[1], pkt[3] = 0x45, tos, 100
	copy(pkt[12:16], n.hosts[src].addr.AsSlice())
	copy(pkt[16:20], n.hosts[dst].addr.AsSlice())
	return pkt
}

// Each DSCP of a flow's data packets is counted where it arrives (the first link), where a
// queue drops it (any link) and where it is delivered (the last link); the ECN bits do not
// change the class, and feedback is not data.
func TestFlowClassesPerDSCP(t *testing.T) {
	n := planned(t)
	hop0, hop1 := &linkObserver{net: n, link: 0}, &linkObserver{net: n, link: 1}
	ok := sim.Admission{Verdict: sim.Admitted}
	drop := sim.Admission{Verdict: sim.Dropped}
	send := func(tos byte, count, dropAt0, dropAt1 int) {
		pkt := ipPacket(n, "ha", "hb", tos)
		for i := range count {
			pkt[4] = byte(i) // a distinct hash per packet
			if i < dropAt0 {
				hop0.Admit(pkt, 0, drop)
				continue
			}
			hop0.Deliver(pkt, 0, 0, hop0.Admit(pkt, 0, ok))
			if i < dropAt0+dropAt1 {
				hop1.Admit(pkt, 0, drop)
				continue
			}
			hop1.Deliver(pkt, 0, 0, hop1.Admit(pkt, 0, ok))
		}
	}
	send(34<<2, 10, 0, 1)                  // AF41: one lost at the bottleneck
	send(36<<2|1, 8, 0, 2)                 // AF42 with ECT(1)
	send(38<<2, 6, 1, 3)                   // AF43
	send(46<<2|3, 5, 0, 0)                 // EF, CE
	send(0, 4, 0, 0)                       // unmarked
	back := ipPacket(n, "hb", "ha", 34<<2) // feedback: not counted
	hopBack := &linkObserver{net: n, link: 2}
	hopBack.Deliver(back, 0, 0, hopBack.Admit(back, 0, ok))
	st, err := n.localFlow("f")
	if err != nil {
		t.Fatal(err)
	}
	want := []ClassCounts{{0, 4, 0, 4}, {34, 10, 1, 9}, {36, 8, 2, 6}, {38, 6, 4, 2}, {46, 5, 0, 5}}
	if !slices.Equal(st.Classes, want) {
		t.Fatalf("classes %+v, want %+v", st.Classes, want)
	}
	if st.SentPackets != 33 || st.Dropped != 7 || st.RecvPackets != 26 {
		t.Fatalf("flow: sent %d dropped %d delivered %d", st.SentPackets, st.Dropped, st.RecvPackets)
	}
}
