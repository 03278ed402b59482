package browser

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// emulated builds, with the emulation engine's topology, a path a → b whose forward link has
// rate (bit/s), 25 ms one-way delay and a 50-packet drop-tail queue, its reverse 10 Mbit/s, and
// one host at each end for the flow "chrome". Namespaces, veths and TUNs are made from inside the
// run's namespaces only (other tests' browsers would see a root network change) and removed
// when the test ends.
func emulated(t *testing.T, rate string) (*topo.Network, endpoint.Host, endpoint.Host) {
	t.Helper()
	emutest.NeedRoot(t)
	doc := fmt.Sprintf(`duration: 60s
links:
  - {name: ab, from: a, to: b, rate: %s, delay: 25ms, queue: 50pkt, duplex: true, reverse: {rate: 10Mbps}}
flows:
  - {name: chrome, kind: browser, path: [a, b]}
`, rate)
	f, err := scenario.Parse("fixture.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Runs[0]
	spec := topo.Spec{Hosts: []topo.HostSpec{{Name: "src", Node: "a"}, {Name: "dst", Node: "b"}},
		Flows: []topo.FlowSpec{{Name: "chrome", Src: "src", Dst: "dst", Kind: scenario.KindBrowser,
			Path: s.Flows[0].Path, ReversePath: s.Flows[0].ReversePath}},
		Interval: s.Interval, Duration: s.Duration, Seed: s.Seed}
	for _, l := range s.Links {
		spec.Links = append(spec.Links, l.LinkConfig)
	}
	n, err := topo.Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("closing the network: %v", err)
		}
	})
	n.Start(time.Now())
	return n, n.Host("src"), n.Host("dst")
}
