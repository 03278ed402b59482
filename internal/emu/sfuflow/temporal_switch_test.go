package sfuflow

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/ovs"
	"github.com/strata-rtc/strata/internal/sim"
)

// Seed 000's experiment 1 live, with the split the paper proposes: under the network policy on
// the 2 Mbit/s path, with Open vSwitch at the SFU's end of it, the SFU registers the layered
// stream as three marked layers, netctl decides two and the switch enforces it (the decision is
// Enforced); the SFU forwards all three layers, marked, and the switch drops TL2 (DSCP 38) before
// the link: TL0 and TL1 reach the receiver with little loss, TL2 does not, and the switch's drops
// count neither as sent nor as lost. When netctl loses the switch's management socket (the switch
// still forwards), the decision is no longer Enforced and the SFU thins the stream itself; when the
// socket is back, netctl reinstalls the rules and the switch thins again; and again after the
// switch crashed and restarted without them.
func TestTemporalSessionNetworkPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds network namespaces, Open vSwitch and runs strata (root)")
	}
	bin := emutest.BuildStrata(t)
	net, links := seedNetwork(t, 2e6, time.Hour, 2e6, true)
	rec := emutest.NewRecorder()
	net.Start(rec.T0)
	ss := startTemporal(t, bin, net, links, "network", rec)
	marks := Env{}.layerMarks()

	var layers []api.Layer
	ok := waitFor(10*time.Second, func() bool {
		var st []api.Stream
		if netctlGet(ss, "/v1/streams", &st) != nil || len(st) != 1 {
			return false
		}
		layers = st[0].Layers
		return len(layers) == 3 && layersNear(layers, 0.15) && layers[0].DSCP == int(marks[0]) &&
			layers[1].DSCP == int(marks[1]) && layers[2].DSCP == int(marks[2])
	})
	t.Logf("registered layers %+v", layers)
	if !ok {
		t.Fatalf("stream layers %+v, want s0t0, s0t1, s0t2 at about 0.6, 0.6, 1.2 Mbit/s marked %v", layers, marks)
	}
	if d := waitDecision(t, ss, 10*time.Second, true); d.Layers != 2 {
		t.Fatalf("decision %+v, want two layers", d)
	}
	if !waitFor(5*time.Second, func() bool { return ss.Forwarding()["s"] == 2 }) {
		t.Fatalf("the subscriber gets %d layers, want 2", ss.Forwarding()["s"])
	}

	// Enforced at the switch: a window of 4 s.
	w := measure(t, ss, net, 4*time.Second)
	t.Logf("enforced, over %v: received per TID %v, counted sent %v, switch_dropped %v; switch passed 34/36 %d/%d, "+
		"dropped 38 %d; link arrivals of 38 %d", w.span, w.recv, w.sent, w.swDropped, w.sw[0], w.sw[1], w.sw[2], w.link38)
	if w.recv[0] == 0 || w.recv[1] == 0 || w.recv[2] != 0 {
		t.Errorf("per TID %v, want TL0 and TL1 only", w.recv)
	}
	if w.sw[2] == 0 || w.link38 != 0 || w.sent[2] != 0 {
		t.Errorf("the switch dropped %d DSCP 38 packets, the link got %d of them, counted sent %d: want drops at "+
			"the switch, none on the link and none counted", w.sw[2], w.link38, w.sent[2])
	}
	if w.swDropped[2] < w.sw[2]/2 || w.swDropped[0]+w.swDropped[1] != 0 {
		t.Errorf("switch_dropped per layer grew by %v while the switch's drop flow counted %d of DSCP 38", w.swDropped, w.sw[2])
	}
	// TL0 and TL1 take 1.2 of the link's 2 Mbit/s: its queue overflows only if the emulator stalls
	// for hundreds of milliseconds (a busy shared machine), so loss is normally zero; 5 % still
	// catches a switch that passed TL2 (the link's 100-packet queue would then drop ~15 %).
	for l := range 2 {
		if per := w.per(l); per > 0.05 {
			t.Errorf("TL%d PER %.1f %% over %v (sent %d, received %d), want at most 5 %%", l, 100*per, w.span, w.sent[l], w.recv[l])
		}
	}

	// netctl loses the switch: its management socket goes away, the switch keeps forwarding.
	sock := strings.TrimPrefix(ss.env.Switches[0].Target, "unix:")
	away := sock + ".away"
	if err := os.Rename(sock, away); err != nil {
		t.Fatal(err)
	}
	waitDecision(t, ss, 6*time.Second, false)
	if sw, err := switchStatus(ss); err != nil || sw.State != api.SwitchUnreachable {
		t.Errorf("switch %+v (%v), want unreachable", sw, err)
	}
	// The SFU thins the stream itself: TL2 stops reaching the switch (its drop counter, read
	// through the moved socket, stands still) while TL0 and TL1 go on.
	direct := ovs.NewClient("unix:" + away)
	var stopped int64
	if !waitFor(6*time.Second, func() bool {
		a := switchDropCount(t, direct, marks[2])
		time.Sleep(time.Second)
		stopped = switchDropCount(t, direct, marks[2])
		return stopped == a
	}) {
		t.Fatalf("DSCP 38 still reaches the switch 6 s after the decision stopped being enforced")
	}
	u := measure(t, ss, net, 2*time.Second)
	t.Logf("unenforced, over %v: received per TID %v", u.span, u.recv)
	if u.recv[0] == 0 || u.recv[1] == 0 || u.recv[2] != 0 || switchDropCount(t, direct, marks[2]) != stopped {
		t.Errorf("without the switch's enforcement, per TID %v, DSCP 38 at the switch %d more: want TL0 and TL1 "+
			"thinned by the SFU", u.recv, switchDropCount(t, direct, marks[2])-stopped)
	}

	// The socket is back: netctl reinstalls the rules, the SFU forwards every layer again.
	if err := os.Rename(away, sock); err != nil {
		t.Fatal(err)
	}
	waitDecision(t, ss, 6*time.Second, true)
	sw, err := switchStatus(ss)
	if err != nil || sw.State != api.SwitchOK || sw.Resyncs == 0 {
		t.Errorf("switch %+v (%v), want ok after a resync", sw, err)
	}
	direct = ovs.NewClient(ss.env.Switches[0].Target)
	if !waitFor(5*time.Second, func() bool { return switchDropCount(t, direct, marks[2]) > stopped }) {
		t.Errorf("the switch drops no DSCP 38 again once enforcing")
	}

	// The switch crashes and restarts (its flow table back to the base NORMAL flow): netctl's next
	// check finds its flows gone and puts them back, and the switch drops TL2 again.
	if err := net.RestartSwitch(context.Background(), ss.env.SFU.Node); err != nil {
		t.Fatal(err)
	}
	if !waitFor(6*time.Second, func() bool {
		after, err := switchStatus(ss)
		return err == nil && after.State == api.SwitchOK && after.Resyncs > sw.Resyncs
	}) {
		after, _ := switchStatus(ss)
		t.Fatalf("switch %+v after a restart, want its rules reinstalled", after)
	}
	waitDecision(t, ss, 6*time.Second, true)
	if !waitFor(5*time.Second, func() bool { return switchDropCount(t, direct, marks[2]) > 0 }) {
		t.Errorf("the restarted switch drops no DSCP 38")
	}
	// Until the rules were back the link carried TL2 too and its queue filled: what it held still
	// crosses the link after the switch drops again.
	if !waitFor(5*time.Second, func() bool { return linkDrained(ss, net, marks[2], 2) }) {
		t.Errorf("DSCP 38 still crossing the link 5 s after the restarted switch dropped it: %+v", net.FlowClasses("s"))
	}
	r := measure(t, ss, net, 2*time.Second)
	t.Logf("after the switch's restart, over %v: received per TID %v", r.span, r.recv)
	if r.recv[0] == 0 || r.recv[1] == 0 || r.recv[2] != 0 {
		t.Errorf("after the switch's restart, per TID %v, want TL0 and TL1 only", r.recv)
	}
	if err := ss.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	t.Logf("summary %s; downlink per DSCP %+v", summaryText(ss.Summaries()), net.FlowClasses("s"))
}

// window is what a session's counters and the switch's flows did over a span.
type window struct {
	span       time.Duration
	recv, sent [3]int64 // per TID, as counted (sent: the link's counts once the layers are marked)
	sw         [3]int64 // the switch's flow packets per layer mark (pass 34, 36; drop 38)
	swDropped  [3]int64 // per TID, the session's switch_dropped
	link38     int64    // packets of DSCP 38 that reached the link
}

func (w window) per(l int) float64 {
	if w.sent[l] == 0 {
		return 0
	}
	return float64(w.sent[l]-w.recv[l]) / float64(w.sent[l])
}

// measure counts over span: the session's per-TID counters, the switch's flows as netctl last
// read them (every second) and the link's per-DSCP arrivals.
func measure(t *testing.T, ss *Sessions, net *topo.Network, span time.Duration) window {
	t.Helper()
	marks := Env{}.layerMarks()
	read := func() (st *sim.SessionStats, sw [3]int64, l38 int64) {
		st = ss.Stats()[0]
		if s, err := switchStatus(ss); err == nil {
			for _, f := range s.Flows {
				for l, m := range marks {
					if f.DSCP == int(m) {
						sw[l] += int64(f.Packets)
					}
				}
			}
		}
		for _, c := range net.FlowClasses("s") {
			if c.DSCP == marks[2] {
				l38 = c.Arrived
			}
		}
		return st, sw, l38
	}
	st0, sw0, l0 := read()
	time.Sleep(span)
	st1, sw1, l1 := read()
	w := window{span: span, link38: l1 - l0}
	for l := range 3 {
		w.recv[l] = st1.Layers[l].Received - st0.Layers[l].Received
		w.sent[l] = st1.Layers[l].Sent - st0.Layers[l].Sent
		w.sw[l] = sw1[l] - sw0[l]
		w.swDropped[l] = st1.Layers[l].SwitchDropped - st0.Layers[l].SwitchDropped
	}
	return w
}

// linkDrained says whether no packet of mark is on the link any more (each that arrived was
// dropped or delivered) and layer tid's count at the receiver stood still over the last 300 ms.
func linkDrained(ss *Sessions, net *topo.Network, mark uint8, tid int) bool {
	inFlight := func() bool {
		for _, c := range net.FlowClasses("s") {
			if c.DSCP == mark {
				return c.Arrived != c.Dropped+c.Delivered
			}
		}
		return false
	}
	if inFlight() {
		return false
	}
	before := ss.Stats()[0].Layers[tid].Received
	time.Sleep(300 * time.Millisecond)
	return !inFlight() && ss.Stats()[0].Layers[tid].Received == before
}

// waitDecision waits for the session's decision to be (or stop being) enforced and returns it.
func waitDecision(t *testing.T, ss *Sessions, limit time.Duration, enforced bool) api.Decision {
	t.Helper()
	var d api.Decisions
	var err error
	if !waitFor(limit, func() bool {
		d = api.Decisions{} // fresh: a false Enforced is omitted from the JSON
		err = netctlGet(ss, "/v1/decisions", &d)
		return err == nil && len(d.Decisions) == 1 && d.Decisions[0].Enforced == enforced
	}) {
		sw, _ := switchStatus(ss)
		t.Fatalf("decisions %+v (%v), want enforced %v within %v; switch %+v", d.Decisions, err, enforced, limit, sw)
	}
	return d.Decisions[0]
}

func switchStatus(ss *Sessions) (api.Switch, error) {
	var sw api.Switch
	return sw, netctlGet(ss, "/v1/switches/"+ss.env.SFU.Node, &sw)
}

// switchDropCount reads the packets of the switch's drop flows of mark from the switch itself.
func switchDropCount(t *testing.T, c *ovs.Client, mark uint8) int64 {
	t.Helper()
	flows, err := c.DumpFlows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range flows {
		if k, ok := dropFlowKey(f); ok && k.dscp == mark {
			n += int64(f.Packets)
		}
	}
	return n
}

// netctlGet reads one of the network controller's resources into out.
func netctlGet(ss *Sessions, path string, out any) error {
	resp, err := hostHTTP(ss.env.SFUHost).Get(ss.netctl + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
