package linkstate

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

func testTopology(t *testing.T) *topo.Topology {
	t.Helper()
	top, err := topo.Parse("t.yaml", []byte("nodes: [a, b]\nlinks:\n  - {name: ab, from: a, to: b, capacity: 10Mbps, interface: eth0, peer_interface: eth1, duplex: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func TestResolvePicksTheNewestFreshSample(t *testing.T) {
	top := testTopology(t)
	agent, sim := NewCounters(top), NewInProcess(top)
	sources := []Source{agent, sim}
	if _, ok := Resolve(sources, 0, 0, time.Second); ok {
		t.Fatal("a sample out of nothing")
	}
	if err := sim.SetLinkLoad("ab", 3*cc.Mbps, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	agent.Report("a", "eth0", 5*cc.Mbps, cc.Mbps, 10500*time.Millisecond)
	s, ok := Resolve(sources, 0, 11*time.Second, 2*time.Second)
	if !ok || s.Load != 5*cc.Mbps || s.Source != "agent a/eth0 tx" {
		t.Fatalf("got %+v, want the agent's newer sample", s)
	}
	// At 12.6 s both samples are more than 2 s old.
	if _, ok := Resolve(sources, 0, 12600*time.Millisecond, 2*time.Second); ok {
		t.Fatal("stale samples used")
	}
	// An older sample does not replace a newer one.
	agent.Report("a", "eth0", 9*cc.Mbps, 0, 10*time.Second)
	if s, _ := agent.Latest(0); s.Load != 5*cc.Mbps {
		t.Fatalf("an older report replaced a newer one: %+v", s)
	}
}

func TestCountersMapInterfacesToLinks(t *testing.T) {
	top := testTopology(t)
	c := NewCounters(top)
	// On b, eth1 receives ab and transmits ab-rev.
	mapped := c.Report("b", "eth1", 2*cc.Mbps, 7*cc.Mbps, time.Second)
	if len(mapped) != 2 || mapped[0] != "ab-rev" || mapped[1] != "ab" {
		t.Fatalf("mapped %v", mapped)
	}
	ab, _ := top.LinkIndex("ab")
	if s, _ := c.Latest(ab); s.Load != 7*cc.Mbps {
		t.Fatalf("ab load %v, want the rx rate of b/eth1", s.Load)
	}
	if m := c.Report("b", "eth9", 1, 1, time.Second); len(m) != 0 {
		t.Fatalf("unmapped interface mapped to %v", m)
	}
	if m := c.Report("a", "eth0", -1, 0, time.Second); len(m) != 1 || m[0] != "ab-rev" {
		t.Fatalf("a negative tx rate should be ignored, the rx kept: %v", m)
	}
}

func TestInProcessErrors(t *testing.T) {
	sim := NewInProcess(testTopology(t))
	if sim.SetLinkLoad("zz", 1, 0) == nil || sim.SetLinkLoad("ab", -1, 0) == nil {
		t.Fatal("bad loads accepted")
	}
	if _, ok := sim.Latest(99); ok {
		t.Fatal("out-of-range link")
	}
}
