//go:build linux

package switchctl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/switchctl"
	"github.com/strata-rtc/strata/internal/netctl/topo"
	"github.com/strata-rtc/strata/internal/ovs/ovstest"
)

// The SFU's node (with the switch) and the receiver's, 1.5 Mbit/s between them: room for two of
// the three layers (0.6, 0.6, 1.2 Mbit/s).
const topology = `name: switch-test
nodes:
  - {name: sfu, enforcer: true}
  - rx
links:
  - {name: down, from: sfu, to: rx, capacity: 1.5Mbps}
`

var marks = []int{34, 36, 38}

// rig is a real switch between a sender (host 0, the SFU) and a receiver (host 1), a controller,
// and its enforcer for the switch.
type rig struct {
	t    *testing.T
	nw   *ovstest.Net
	ctl  *netctl.Controller
	enf  *switchctl.Enforcer
	stop context.CancelFunc
	now  time.Duration

	tx, rx   *net.UDPConn
	dst      netip.AddrPort
	tx6, rx6 *net.UDPConn
	dst6     netip.AddrPort
}

func newRig(t *testing.T) *rig {
	nw := ovstest.New(t, 2)
	r := &rig{t: t, nw: nw}
	r.tx, r.rx = nw.UDP(t, 0, nw.Hosts[0].Addr, 5000), nw.UDP(t, 1, nw.Hosts[1].Addr, 6000)
	r.dst = netip.AddrPortFrom(nw.Hosts[1].Addr, 6000)
	a6, b6 := netip.MustParseAddr("fd77::1"), netip.MustParseAddr("fd77::2")
	r.tx6, r.rx6 = nw.UDP(t, 0, a6, 5000), nw.UDP(t, 1, b6, 6000)
	r.dst6 = netip.AddrPortFrom(b6, 6000)
	r.ctl, r.enf, r.stop = r.controller(nw.Switch.MgmtTarget())
	return r
}

// controller starts a controller and the enforcer of target.
func (r *rig) controller(target string) (*netctl.Controller, *switchctl.Enforcer, context.CancelFunc) {
	r.t.Helper()
	top, err := topo.Parse("t.yaml", []byte(topology))
	if err != nil {
		r.t.Fatal(err)
	}
	enf, err := switchctl.New(switchctl.Config{Node: "sfu", Target: target, Resync: 100 * time.Millisecond})
	if err != nil {
		r.t.Fatal(err)
	}
	ctl, err := netctl.New(top, netctl.DefaultConfig(), netctl.WithEnforcer(enf))
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { enf.Run(ctx, ctl); close(done) }()
	stop := func() { cancel(); <-done }
	r.t.Cleanup(stop)
	return ctl, enf, stop
}

// subscribe registers the stream and subscriptions over IPv4 ("s4") and IPv6 ("s6").
func (r *rig) subscribe() {
	r.t.Helper()
	layers := []api.Layer{{RateBps: 600_000, DSCP: 34}, {RateBps: 600_000, DSCP: 36}, {RateBps: 1_200_000, DSCP: 38}}
	must(r.t, r.ctl.PutStream(api.Stream{ID: "cam", Source: "sfu", Layers: layers}))
	for id, f := range map[string]*api.Flow{
		"s4": {Proto: "udp", Src: "10.77.0.1:5000", Dst: "10.77.0.2:6000"},
		"s6": {Proto: "udp", Src: "[fd77::1]:5000", Dst: "[fd77::2]:6000"},
	} {
		must(r.t, r.ctl.PutSubscription(api.Subscription{ID: id, Stream: "cam", Receiver: "rx", Flow: f}))
	}
	r.update()
}

func (r *rig) update() {
	r.now += time.Second
	r.ctl.Update(r.now)
}

// send sends 20 packets of each mark on both flows and returns what arrived per mark (IPv4, IPv6),
// waiting for at least want4 and want6.
func (r *rig) send(want4, want6 int) (map[int]int, map[int]int) {
	r.t.Helper()
	for _, d := range marks {
		must(r.t, ovstest.Send(r.tx, r.dst, d, 20))
		must(r.t, ovstest.Send(r.tx6, r.dst6, d, 20))
	}
	return ovstest.CountAtLeast(r.rx, want4, 200*time.Millisecond), ovstest.CountAtLeast(r.rx6, want6, 50*time.Millisecond)
}

// expect checks that the first allow marks arrive in full and the others not at all.
func (r *rig) expect(allow int, what string) {
	r.t.Helper()
	got4, got6 := r.send(20*allow, 20*allow)
	for i, d := range marks {
		want := 0
		if i < allow {
			want = 20
		}
		if got4[d] != want || got6[d] != want {
			r.t.Fatalf("%s: DSCP %d arrived %d times over IPv4 and %d over IPv6, want %d (all: %v %v)", what, d, got4[d], got6[d], want, got4, got6)
		}
	}
}

// waitFor polls cond for up to 5 s.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s; switch: %+v", what, r.enf.Status())
		}
	}
}

func (r *rig) enforced(sub string, want bool) func() bool {
	return func() bool { d, ok := r.ctl.Decision(sub); return ok && d.Enforced == want }
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEnforcement: netctl's decisions become flows on a real switch; packets of dropped layers do
// not leave it, the others do, over IPv4 and IPv6; the counters say so; a removed subscription's
// flows go.
func TestEnforcement(t *testing.T) {
	r := newRig(t)
	r.waitFor("the first (empty) install", func() bool { return r.enf.Status().State == api.SwitchOK })
	r.expect(3, "no rules")

	r.subscribe()
	if d, _ := r.ctl.Decision("s4"); d.Layers != 1 {
		// Two subscriptions share 1.5 Mbit/s: one layer each.
		t.Fatalf("decision %+v, want 1 layer", d)
	}
	r.waitFor("s4 enforced", r.enforced("s4", true))
	r.waitFor("s6 enforced", r.enforced("s6", true))
	r.expect(1, "1 layer allowed")

	must(t, r.ctl.DeleteSubscription("s6"))
	r.update() // s4 alone: two layers fit
	r.update()
	r.update()
	if d, _ := r.ctl.Decision("s4"); d.Layers != 2 || d.Enforced {
		t.Fatalf("decision %+v, want 2 layers, not yet enforced", d)
	}
	r.waitFor("s4 enforced with 2 layers", r.enforced("s4", true))
	got4, got6 := r.send(40, 60)
	if got4[34] != 20 || got4[36] != 20 || got4[38] != 0 || got6[34] != 20 || got6[36] != 20 || got6[38] != 20 {
		t.Fatalf("2 layers for s4, s6 gone: got %v (IPv4) %v (IPv6)", got4, got6)
	}
	// Counters reach the status with the next checks (the datapath reports them lazily). The flows
	// of DSCP 34 (pass) and 38 (drop) did not change with the new rule set, so they kept counting:
	// 20 packets of 142 bytes in each phase. The flow of DSCP 36 was replaced (drop → pass) with
	// its counters reset (reset_counts; OpenFlow would copy the dropped 20 into the pass flow): at
	// least the 20 sent since, fewer than 40 (packets of the same match just before a change may be
	// counted on the new flow: OVS attributes its cache's pending counts to the rule it revalidates
	// against).
	r.waitFor("counters", func() bool {
		n := 0
		for _, f := range r.enf.Status().Flows {
			want := map[int]string{34: "pass", 36: "pass", 38: "drop"}[f.DSCP]
			switch {
			case f.Subscription != "s4" || f.Action != want:
			case f.DSCP != 36 && f.Packets == 40 && f.Bytes == 40*142, f.DSCP == 36 && f.Packets >= 20 && f.Packets < 40:
				n++
			}
		}
		return n == 3
	})
	// The API shows the same: GET /v1/switches.
	ts := httptest.NewServer(netctl.NewServer(r.ctl, netctl.WithSwitches(r.enf)))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/switches")
	must(t, err)
	var list []api.Switch
	must(t, json.NewDecoder(resp.Body).Decode(&list))
	resp.Body.Close()
	if len(list) != 1 {
		t.Fatalf("GET /v1/switches: %+v", list)
	}
	st := list[0]
	if st.Node != "sfu" || st.State != api.SwitchOK || st.Rules != 1 || st.InstalledVersion != st.RulesVersion || len(st.Flows) != 3 || st.InstalledAt.IsZero() {
		t.Fatalf("GET /v1/switches: %+v", st)
	}

	must(t, r.ctl.DeleteStream("cam"))
	r.update()
	r.waitFor("empty rules installed", func() bool { s := r.enf.Status(); return s.InstalledVersion == s.RulesVersion && s.Rules == 0 })
	r.expect(3, "subscriptions removed")
}

// TestSwitchRestart: a restarted switch loses its flows; the next check finds out and reinstalls
// them, and the dropped layers stop again.
func TestSwitchRestart(t *testing.T) {
	r := newRig(t)
	r.subscribe()
	r.waitFor("enforced", r.enforced("s4", true))
	r.expect(1, "before the restart")
	start := time.Now()
	must(t, r.nw.Switch.Restart(context.Background()))
	restarted := time.Now()
	r.waitFor("a resync", func() bool { return r.enf.Status().Resyncs > 0 })
	t.Logf("switch restart took %v; rules back %v after it (checks every 100 ms)", restarted.Sub(start), time.Since(restarted))
	r.expect(1, "after the restart")
	if d, _ := r.ctl.Decision("s4"); !d.Enforced {
		t.Errorf("decision %+v not enforced after the resync", d)
	}
}

// TestControllerRestart: a new controller on the same switch replaces the old one's flows with
// its own view (nothing, until the SFU registers again).
func TestControllerRestart(t *testing.T) {
	r := newRig(t)
	r.subscribe()
	r.waitFor("enforced", r.enforced("s4", true))
	r.expect(1, "first controller")
	r.stop() // as if it crashed: its rules stay on the switch
	r.expect(1, "first controller gone")
	r.ctl, r.enf, r.stop = r.controller(r.nw.Switch.MgmtTarget())
	r.waitFor("the new controller's install", func() bool { return r.enf.Status().State == api.SwitchOK })
	r.expect(3, "new controller, no subscriptions")
	r.subscribe()
	r.waitFor("enforced again", r.enforced("s4", true))
	r.expect(1, "new controller, subscriptions registered again")
	r.stop() // a clean stop (strata netctl serve on SIGTERM) takes its rules off the switch
	must(t, r.enf.Clear(context.Background()))
	r.expect(3, "controller stopped cleanly")
}

// TestUnreachable: with no switch behind the socket, or the switch gone, the state says
// unreachable with ovs-ofctl's error, decisions are not enforced, and the controller keeps
// deciding.
func TestUnreachable(t *testing.T) {
	r := newRig(t)
	r.subscribe()
	r.waitFor("enforced", r.enforced("s4", true))
	w := r.ctl.Watch(64)
	defer w.Close()
	must(t, r.nw.Switch.Close())
	r.waitFor("not enforced", r.enforced("s4", false))
	st := r.enf.Status()
	if st.State != api.SwitchUnreachable || st.Error == "" {
		t.Fatalf("status %+v, want unreachable with an error", st)
	}
	t.Logf("switch gone: %s", st.Error)
	sawEvent := false
	for len(w.Events()) > 0 {
		if ev := <-w.Events(); ev.Type == api.EventDecision && ev.Decision.Subscription == "s4" && !ev.Decision.Enforced {
			sawEvent = true
		}
	}
	if !sawEvent {
		t.Error("no decision event said s4 is no longer enforced")
	}
	must(t, r.ctl.DeleteSubscription("s6"))
	r.update()
	r.update()
	r.update()
	if d, _ := r.ctl.Decision("s4"); d.Layers != 2 || d.Enforced {
		t.Fatalf("the controller should keep deciding: %+v", d)
	}

	ctl, enf, _ := r.controller("unix:" + t.TempDir() + "/none.mgmt")
	for deadline := time.Now().Add(5 * time.Second); enf.Status().State != api.SwitchUnreachable; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no socket: status %+v", enf.Status())
		}
	}
	if st := enf.Status(); st.Error == "" || st.InstalledVersion != 0 {
		t.Fatalf("no socket: %+v", st)
	}
	_ = ctl
}

// TestRefused: a switch whose flow table is full refuses the rules; the state says refused with
// the switch's OpenFlow error, the decisions are not enforced, and once there is room the rules go
// in.
func TestRefused(t *testing.T) {
	r := newRig(t)
	r.waitFor("the first install", func() bool { return r.enf.Status().State == api.SwitchOK })
	ctx := context.Background()
	_, err := r.nw.Switch.Vsctl(ctx, "--", "set", "bridge", "br0", "flow_tables:0=@t", "--",
		"--id=@t", "create", "Flow_Table", "flow_limit=4", "overflow_policy=refuse")
	must(t, err)
	r.subscribe() // 1 base flow + 2 × 3 rule flows > 4
	r.waitFor("refused", func() bool { return r.enf.Status().State == api.SwitchRefused })
	st := r.enf.Status()
	t.Logf("refused: %s", st.Error)
	if d, _ := r.ctl.Decision("s4"); d.Enforced {
		t.Fatal("enforced although the switch refused the rules")
	}
	r.expect(3, "refused rules: the switch forwards as before")
	_, err = r.nw.Switch.Vsctl(ctx, "clear", "bridge", "br0", "flow_tables")
	must(t, err)
	r.waitFor("enforced once there is room", r.enforced("s4", true))
	r.expect(1, "after the limit is lifted")
	if st := r.enf.Status(); st.State != api.SwitchOK || st.Error != "" {
		t.Fatalf("status %+v", st)
	}
}

// BenchmarkInstall measures installing a rule set of N subscriptions (3 marked layers each) on a
// real switch, until ovs-ofctl's bundle is committed ("bundle": the same socket through a symlink
// with no control socket beside it) and until the datapath has it too ("datapath", what the
// enforcer waits for before acknowledging):
//
//	go test -run '^$' -bench Install -benchtime 10x ./internal/netctl/switchctl/
func BenchmarkInstall(b *testing.B) {
	nw := ovstest.New(b, 0)
	bare := filepath.Join(b.TempDir(), "br0.mgmt")
	if err := os.Symlink(strings.TrimPrefix(nw.Switch.MgmtTarget(), "unix:"), bare); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 100, 1000} {
		for wait, target := range map[string]string{"bundle": "unix:" + bare, "datapath": nw.Switch.MgmtTarget()} {
			b.Run(fmt.Sprintf("%s/%d", wait, n), func(b *testing.B) { benchInstall(b, target, n) })
		}
	}
}

func benchInstall(b *testing.B, target string, n int) {
	rules := make([]api.Rule, n)
	for i := range rules {
		rules[i] = api.Rule{Node: "sfu", Subscription: fmt.Sprint("s", i), Allow: 2, Layers: 3,
			Flow:     &api.Flow{Proto: "udp", Src: "10.0.0.1:5000", Dst: fmt.Sprintf("10.1.%d.%d:6000", i/250, i%250+1)},
			PassDSCP: []int{34, 36}, DropDSCP: []int{38}}
	}
	for b.Loop() {
		if err := switchctl.Install(context.Background(), target, rules); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMeters: the media reservation's meter polices what enters by the link's port except the
// managed media, survives a switch restart, and goes when the controller withdraws it.
func TestMeters(t *testing.T) {
	r := newRig(t)
	r.subscribe()
	r.waitFor("enforced", r.enforced("s4", true))
	other := r.nw.UDP(t, 1, r.nw.Hosts[1].Addr, 6001) // background traffic: not a managed flow
	otherDst := netip.AddrPortFrom(r.nw.Hosts[1].Addr, 6001)
	burst := func() (background, media int) {
		t.Helper()
		// A few packets first, so that the datapath has cached both flows (a cold cache sends
		// every packet of a burst up to ovs-vswitchd, which drops some) and the meter's bucket is
		// full again, then the burst.
		must(t, ovstest.Send(r.tx, otherDst, 0, 3))
		must(t, ovstest.Send(r.tx, r.dst, 34, 3))
		ovstest.Count(other, 100*time.Millisecond)
		ovstest.Count(r.rx, 10*time.Millisecond)
		time.Sleep(200 * time.Millisecond)
		// 10 rounds of 20 + 20 packets, 2 ms apart: fast for the meter, gentle for the sockets.
		for range 10 {
			must(t, ovstest.Send(r.tx, otherDst, 0, 20))
			must(t, ovstest.Send(r.tx, r.dst, 34, 20))
			time.Sleep(2 * time.Millisecond)
		}
		return ovstest.Count(other, 200*time.Millisecond)[0], ovstest.CountAtLeast(r.rx, 200, 50*time.Millisecond)[34]
	}
	// 200 × 142 bytes in about 20 ms (227 kbit) against a 100 kbit bucket filling at 1 Mbit/s:
	// about half the background is dropped, none of the media.
	r.enf.ApplyMeters("sfu", []api.Meter{{Link: "down", Interface: "p1", RateBps: 1_000_000, BurstBits: 100_000}})
	r.waitFor("the meter", func() bool {
		return len(r.enf.Status().Meters) == 1 && r.enf.Status().InstalledVersion == r.enf.Status().RulesVersion
	})
	bg, media := burst()
	if bg == 0 || bg > 150 || media != 200 {
		t.Fatalf("metered: %d of 200 background packets and %d of 200 media packets arrived (want some but at most 150, and all)", bg, media)
	}
	r.waitFor("meter counters", func() bool {
		m := r.enf.Status().Meters
		return len(m) == 1 && m[0].DroppedPackets > 0 && m[0].Packets >= 200 && m[0].RateBps == 1_000_000
	})

	must(t, r.nw.Switch.Restart(context.Background())) // meters and flows are lost
	r.waitFor("a resync", func() bool { return r.enf.Status().Resyncs > 0 && r.enf.Status().State == api.SwitchOK })
	if bg, media := burst(); bg == 0 || bg > 150 || media != 200 {
		t.Fatalf("after a restart: %d background and %d media packets arrived", bg, media)
	}

	r.enf.ApplyMeters("sfu", nil)
	r.waitFor("no meter", func() bool {
		return len(r.enf.Status().Meters) == 0 && r.enf.Status().InstalledVersion == r.enf.Status().RulesVersion
	})
	if bg, media := burst(); bg != 200 || media != 200 {
		t.Fatalf("meter withdrawn: %d background and %d media packets arrived, want all", bg, media)
	}
	ms, err := r.nw.Switch.Client().MeterStats(context.Background())
	if err != nil || len(ms) != 0 {
		t.Fatalf("meters left on the switch: %+v %v", ms, err)
	}
}
