package sfuflow

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/netctl/topo"
	"github.com/strata-rtc/strata/internal/sim"
)

// TestNetctlTopology: the controller's topology has the scenario's links, and every node with a
// switch can enforce (netctl refuses -switch for a node that cannot); it loads.
func TestNetctlTopology(t *testing.T) {
	env := Env{SFU: &scenario.SFU{Node: "paris"},
		Links: []sim.LinkConfig{
			{Name: "lp", From: "london", To: "paris", Rate: sim.ConstantRate(100e6)},
			{Name: "pm", From: "paris", To: "madrid", Rate: sim.ConstantRate(10e6)},
			{Name: "mr", From: "madrid", To: "rome", Rate: sim.ConstantRate(2e6)}},
		Switches: []Switch{{Node: "paris", Target: "unix:/x/br0.mgmt", Links: []string{"pm"}, Ports: []string{"w1"}},
			{Node: "madrid", Target: "unix:/y/br0.mgmt", Links: []string{"mr"}, Ports: []string{"w2"}}}}
	y := netctlTopology(env)
	top, err := topo.Parse("emu.yaml", []byte(y))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	for n, want := range map[string]bool{"paris": true, "madrid": true, "london": false, "rome": false} {
		if got := top.CanEnforce(n); got != want {
			t.Errorf("%s can enforce: %v, want %v\n%s", n, got, want, y)
		}
	}
	if !strings.Contains(y, `role: sfu`) || len(top.Links()) != 3 {
		t.Errorf("topology:\n%s", y)
	}
	// A switched link's interface names the switch's port its packets enter by (the meter's match).
	for i, want := range []string{"", "w1", "w2"} {
		if got := top.Links()[i].Interface; got != want {
			t.Errorf("link %s: interface %q, want %q", top.Links()[i].Name, got, want)
		}
	}
}
