package scenario

import (
	"errors"
	"strings"
	"testing"
)

const sfuDoc = `
name: sfu-demo
duration: 10s
links:
  - {name: up, from: a, to: hub, rate: 100Mbps, delay: 3ms, duplex: true}
  - {name: down, from: hub, to: b, rate: 2Mbps, delay: 6ms, queue: 100pkt, duplex: true}
sfu:
  node: hub
  policy: network
  sessions:
    - {name: s, count: 2, start_step: 1s, layers: [0.6Mbps, 0.6Mbps, 1.2Mbps], path: [a, hub, b],
       codec: {model: statistical, keyframe_interval: 3s}}
sweep:
  param: sfu.policy
  values: [probe, network]
`

func TestParseSFU(t *testing.T) {
	f, err := Parse("sfu.yaml", []byte(sfuDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs, want one per policy", len(f.Runs))
	}
	for i, want := range []string{"probe", "network"} {
		u := f.Runs[i].SFU
		if u == nil || u.Policy != want || len(u.Sessions) != 2 {
			t.Fatalf("run %d: sfu %+v", i, u)
		}
		// netctl: auto runs the controller for the network policy only.
		if u.NetCtl != (want == "network") {
			t.Errorf("%s: netctl %v", want, u.NetCtl)
		}
		if s := u.Sessions[1]; s.Name != "s-2" || s.Start.Seconds() != 1 || len(s.Layers) != 3 || s.Layers[2] != 1.2e6 {
			t.Errorf("second session %+v", s)
		}
		sm, err := f.Runs[i].Build(1)
		if err != nil {
			t.Fatal(err)
		}
		if err := sm.Run(); err != nil {
			t.Fatal(err)
		}
		if n := len(sm.Flows()); n != 2 {
			t.Errorf("%d flows, want the two sessions", n)
		}
	}
}

func TestParseSFUErrors(t *testing.T) {
	noSweep := sfuDoc[:strings.Index(sfuDoc, "sweep:")]
	for _, c := range []struct{ from, to, want string }{
		{"policy: network", "policy: magic", `sfu.policy: unknown policy "magic"`},
		{"path: [a, hub, b]", "path: [a, b]", "must run from a sender through the SFU node hub"},
		{"layers: [0.6Mbps, 0.6Mbps, 1.2Mbps]", "layers: [1Mbps, 1Mbps, 1Mbps, 1Mbps]", "want 1 to 3 layer rates"},
		{"node: hub", "node: nowhere", "through the SFU node nowhere"},
		{"  policy: network\n", "  policy: network\n  netctl: maybe\n", "sfu.netctl: want on, off or auto"},
		{"  policy: network\n", "  policy: network\n  netctl: {use: on, reserve: 100%}\n", "sfu.netctl.reserve: the reservation must leave background traffic something"},
		{"  policy: network\n", "  policy: network\n  netctl: {use: on, reserve: lots}\n", "sfu.netctl.reserve"},
		{"  policy: network\n", "  policy: network\n  netctl: {use: on, reserv: 0.8}\n", "reserv"},
		{"queue: 100pkt, duplex: true}", "queue: 100pkt, duplex: true, switch: p4}", `links[down].switch: unknown switch "p4" (ovs or none)`},
		{"path: [a, hub, b]", "path: [a, hub, b], subscriber: firefox", `sfu.sessions[s].subscriber: unknown subscriber "firefox" (pion or browser)`},
		{"path: [a, hub, b]", "path: [a, hub, b], layering: spatial", `sfu.sessions[s].layering: unknown layering "spatial" (simulcast or temporal)`},
		{"path: [a, hub, b]", "path: [a, hub, b], layering: temporal, subscriber: browser", "temporal layering is counted per TID by a pion subscriber"},
	} {
		doc := strings.Replace(noSweep, c.from, c.to, 1)
		_, err := Parse("bad.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
	// The feedback needs links back from the receiver to the SFU.
	oneWay := strings.Replace(noSweep, "queue: 100pkt, duplex: true", "queue: 100pkt", 1)
	if _, err := Parse("oneway.yaml", []byte(oneWay)); err == nil || !strings.Contains(err.Error(), "no link from b to hub") {
		t.Errorf("one-way receiver path: %v", err)
	}
}

// TestSFUReservation: netctl as a mapping sets the reservation; the simulated switch then polices
// the links leaving the SFU's node, and the run works.
func TestSFUReservation(t *testing.T) {
	noSweep := sfuDoc[:strings.Index(sfuDoc, "sweep:")]
	doc := strings.Replace(noSweep, "  policy: network\n", "  policy: network\n  netctl: {use: auto, reserve: 80%}\n", 1)
	f, err := Parse("reserve.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := f.Runs[0].SFU
	if !u.NetCtl || u.Reserve != 0.8 {
		t.Fatalf("sfu %+v", u)
	}
	doc = strings.Replace(doc, "queue: 100pkt, duplex: true}", "queue: 100pkt, duplex: true, switch: ovs}", 1)
	if f, err = Parse("switched.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if l := f.Runs[0].Links; len(l) != 4 || l[2].Switch != SwitchOVS || l[3].Switch != "" || l[0].Switch != "" {
		t.Fatalf("links %+v: the switch belongs to down only", l)
	}
	if u := f.Runs[0].SFU; !u.NetCtl {
		t.Fatalf("sfu %+v", u)
	}
	// Seed 000's sessions of one or two layers send that many temporal layers.
	for _, layers := range []string{"[0.6Mbps]", "[0.6Mbps, 0.6Mbps]"} {
		two := strings.Replace(doc, "[0.6Mbps, 0.6Mbps, 1.2Mbps]", layers, 1)
		if _, err := Parse("temporal.yaml", []byte(two)); err != nil {
			t.Errorf("temporal layering with layers %s: %v", layers, err)
		}
	}
	sm, err := f.Runs[0].Build(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Run(); err != nil {
		t.Fatal(err)
	}
	off := strings.Replace(doc, "use: auto", "use: off", 1)
	if f, err = Parse("off.yaml", []byte(off)); err != nil || f.Runs[0].SFU.NetCtl {
		t.Fatalf("use: off: %v %+v", err, f.Runs[0].SFU)
	}
}

// A session may ask for a Chromium subscriber; the simulator has none and says where it runs.
func TestSFUBrowserSubscriberNeedsEmulation(t *testing.T) {
	noSweep := sfuDoc[:strings.Index(sfuDoc, "sweep:")]
	f, err := Parse("pion.yaml", []byte(noSweep))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Runs[0].SFU.Sessions[0].Subscriber; got != SubscriberPion {
		t.Errorf("default subscriber %q, want pion", got)
	}
	doc := strings.Replace(noSweep, "path: [a, hub, b]", "path: [a, hub, b], subscriber: browser", 1)
	if f, err = Parse("browser.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	s := f.Runs[0]
	if s.SFU.Sessions[1].Subscriber != SubscriberBrowser {
		t.Fatalf("sessions %+v", s.SFU.Sessions)
	}
	want := "sfu: session s-1: browser subscribers run only in emulation: strata lab run --engine emu"
	for what, err := range map[string]error{"Build": second(s.Build(1)), "NeedsEmulation": s.NeedsEmulation()} {
		if !errors.Is(err, ErrBrowserSubscriberNeedsEmulation) || err.Error() != want {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// Temporal layering is what the emulated publisher sends; the simulator runs the session as
// always (its sessions are cumulative layers).
func TestSFULayering(t *testing.T) {
	noSweep := sfuDoc[:strings.Index(sfuDoc, "sweep:")]
	f, err := Parse("simulcast.yaml", []byte(noSweep))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Runs[0].SFU.Sessions[0].Layering; got != LayeringSimulcast {
		t.Errorf("default layering %q, want simulcast", got)
	}
	doc := strings.Replace(noSweep, "path: [a, hub, b]", "path: [a, hub, b], layering: temporal", 1)
	if f, err = Parse("temporal.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if got := f.Runs[0].SFU.Sessions[1].Layering; got != LayeringTemporal {
		t.Fatalf("layering %q", got)
	}
	sm, err := f.Runs[0].Build(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Run(); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseSFU(f *testing.F) {
	f.Add(sfuDoc)
	f.Add(strings.Replace(sfuDoc, "count: 2", "count: 0", 1))
	f.Add("duration: 1s\nlinks: [{name: a, from: x, to: y, rate: 1Mbps, duplex: true}]\nsfu: {node: x, sessions: [{name: s, layers: [1Mbps], path: [y, x, y]}]}\n")
	f.Add("duration: 1s\nlinks: [{name: a, from: x, to: y, rate: 1Mbps}]\nsfu: {node: y}\n")
	f.Add(strings.Replace(sfuDoc, "path: [a, hub, b]", "path: [a, hub, b], subscriber: browser", 1))
	f.Add(strings.Replace(sfuDoc, "path: [a, hub, b]", "path: [a, hub, b], layering: temporal", 1))
	f.Fuzz(func(t *testing.T, doc string) {
		file, err := Parse("fuzz.yaml", []byte(doc))
		if err != nil {
			if file != nil {
				t.Fatal("a file with errors must yield no runs")
			}
			return
		}
		for _, s := range file.Runs {
			if _, err := s.Build(1); err != nil && !errors.Is(err, ErrBrowserSubscriberNeedsEmulation) {
				t.Fatalf("parsed scenario does not build: %v", err)
			}
		}
	})
}
