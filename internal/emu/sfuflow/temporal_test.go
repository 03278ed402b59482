package sfuflow

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/sim"
)

// seedNetwork is pub ⇄ sfu ⇄ sub as in seed 000's experiment 1 (London, Paris, Madrid): 100 Mbit/s
// to the SFU, and the SFU → receiver path (6 ms, 100-packet queue) at down, cut to cutTo at cutAt,
// with Open vSwitch at the SFU's end of it when switched (seed 000's `switch: ovs`).
func seedNetwork(t *testing.T, down float64, cutAt time.Duration, cutTo float64, switched bool) (*topo.Network, []sim.LinkConfig) {
	link := func(from, to string, rate sim.RateSchedule, delay time.Duration) sim.LinkConfig {
		return sim.LinkConfig{Name: from + "-" + to, From: from, To: to, Rate: rate, Delay: delay,
			Queue: sim.Limit{Unit: sim.LimitPackets, Value: 100}}
	}
	links := []sim.LinkConfig{
		link("pub", "sfu", sim.ConstantRate(100e6), 3*time.Millisecond), link("sfu", "pub", sim.ConstantRate(100e6), 3*time.Millisecond),
		link("sfu", "sub", sim.RateSchedule{{At: 0, Bps: down}, {At: cutAt, Bps: cutTo}}, 6*time.Millisecond),
		link("sub", "sfu", sim.ConstantRate(100e6), 6*time.Millisecond),
	}
	var sw []string
	if switched {
		sw = []string{"sfu-sub"}
	}
	n, err := topo.Build(context.Background(), topo.Spec{
		Links: links, Switched: sw,
		Hosts: []topo.HostSpec{{Name: "pub", Node: "pub"}, {Name: "sfu", Node: "sfu"}, {Name: "sub", Node: "sub"}},
		Flows: []topo.FlowSpec{{Name: "up", Src: "pub", Dst: "sfu", Path: []string{"pub", "sfu"}},
			{Name: "s", Src: "sfu", Dst: "sub", Path: []string{"sfu", "sub"}}},
		Duration: 40 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n, links
}

// startTemporal starts one temporal-layered session under policy on net, with the network's
// links (the controller's topology), switches and per-DSCP counts.
func startTemporal(t *testing.T, bin string, net *topo.Network, links []sim.LinkConfig, policy string, rec *emutest.Recorder) *Sessions {
	return startEnv(t, Env{SFU: temporalSFU(policy), SFUHost: net.Host("sfu"), Binary: bin, Clock: rec, Log: emutest.Log(t),
		Links: links, Classes: net.FlowClasses, Switches: SwitchesOf(net),
		Sessions: []Session{{Name: "s", Pub: net.Host("pub"), Sub: net.Host("sub"), Rec: rec}}}, 20*time.Second)
}

func temporalSFU(policy string) *scenario.SFU {
	return &scenario.SFU{Node: "sfu", Policy: policy, NetCtl: policy == "network", Sessions: []scenario.SFUSession{{Name: "s",
		Layers: []float64{0.6e6, 0.6e6, 1.2e6}, Path: []string{"pub", "sfu", "sub"}, Stop: 40 * time.Second,
		Layering: scenario.LayeringTemporal}}}
}

// A temporal-layered session under bwe receives all three layers, by TID, at about 1:1:2 of
// payload on a free 10 Mbit/s path; cut to seed 000's 2 Mbit/s the SFU thins it.
func TestTemporalSessionBWE(t *testing.T) {
	if testing.Short() {
		t.Skip("builds network namespaces and runs strata (root)")
	}
	const cutAt = 7 * time.Second
	bin := emutest.BuildStrata(t)
	net, links := seedNetwork(t, 10e6, cutAt, 2e6, false)
	rec := emutest.NewRecorder()
	net.Start(rec.T0)
	ss := startTemporal(t, bin, net, links, "bwe", rec)
	up := rec.Now()
	if !waitFor(cutAt-up, func() bool { return ss.Forwarding()["s"] == 3 }) {
		t.Fatalf("the subscriber did not get three temporal layers on a free path within %v (%d); %s",
			(cutAt - up).Round(time.Millisecond), ss.Forwarding()["s"], summaryText(ss.Summaries()))
	}
	time.Sleep(cutAt - rec.Now())
	free := ss.Stats()[0]
	// The payload per layer over the intervals with all three forwarded (a busy machine's delay
	// spikes may make the estimator step down for a while even on a free path).
	var g [3]float64
	full := 0
	for b := range free.BinForwarded {
		if free.BinForwarded[b] != 3 {
			continue
		}
		full++
		for l := range g {
			g[l] += float64(free.Layers[l].BinGood[b])
		}
	}
	secs := float64(full) * free.Interval().Seconds()
	for l := range g {
		g[l] *= 8 / secs / 1e3
	}
	t.Logf("payload received per layer over the %.1f s with three layers on the free path: %.0f, %.0f, %.0f kbit/s", secs, g[0], g[1], g[2])
	if secs < 2 {
		t.Fatalf("three layers for only %.1f s of the free path's %v: %s", secs, cutAt-up, perSecond(free.BinForwarded))
	}
	if g[1] < 0.6*g[0] || g[1] > 1.4*g[0] || g[2] < 1.3*g[0] || g[2] > 2.7*g[0] {
		t.Errorf("payload per layer on the free path %v: not near 1:1:2", g)
	}
	if !waitFor(6*time.Second, func() bool { l := ss.Forwarding()["s"]; return l > 0 && l < 3 }) {
		t.Fatalf("6 s after the cut to 2 Mbit/s the subscriber still gets %d layers", ss.Forwarding()["s"])
	}
	t.Logf("%d layers %v after the cut", ss.Forwarding()["s"], (rec.Now() - cutAt).Round(time.Millisecond))
	if err := ss.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	t.Logf("summary %s; downlink per DSCP %+v", summaryText(ss.Summaries()), net.FlowClasses("s"))
	t.Logf("layers at the end of each second: %s", perSecond(ss.Stats()[0].BinForwarded))
}

// perSecond lists a series of 100 ms bins at the end of each second.
func perSecond(bins []float64) string {
	var out []string
	for b := 9; b < len(bins); b += 10 {
		if math.IsNaN(bins[b]) {
			break
		}
		out = append(out, fmt.Sprint(bins[b]))
	}
	return strings.Join(out, " ")
}

// layersNear says whether the layers are s0t0, s0t1, s0t2 at 0.6, 0.6, 1.2 Mbit/s within tol
// (the SFU measures what arrives, RTP headers included, over its last second).
func layersNear(l []api.Layer, tol float64) bool {
	want := []float64{0.6e6, 0.6e6, 1.2e6}
	for i, x := range l {
		if x.Name != fmt.Sprintf("s0t%d", i) || float64(x.RateBps) < (1-tol)*want[i] || float64(x.RateBps) > (1+2*tol)*want[i] {
			return false
		}
	}
	return true
}
