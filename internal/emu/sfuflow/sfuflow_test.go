package sfuflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

// network is pub ⇄ sfu ⇄ sub through the emulator: 100 Mbit/s, 5 ms, 100-packet queues, except
// the downlink sfu → sub, cut at cutAt to 700 kbit/s behind a 100 ms queue.
// startSession starts the SFU block u, whose one session "s" runs from net's pub host through
// its sfu host to its sub host, recorded by rec, within the time given; the test's end stops it
// (Stop is idempotent: a test may stop it itself to check the error).
func startSession(t *testing.T, bin string, net *topo.Network, u *scenario.SFU, rec *emutest.Recorder, within time.Duration) *Sessions {
	t.Helper()
	return startEnv(t, Env{SFU: u, SFUHost: net.Host("sfu"), Binary: bin, Clock: rec, Log: emutest.Log(t),
		Sessions: []Session{{Name: "s", Pub: net.Host("pub"), Sub: net.Host("sub"), Rec: rec}}}, within)
}

// startEnv starts the sessions of env within the time given; the test's end stops them.
func startEnv(t *testing.T, env Env, within time.Duration) *Sessions {
	t.Helper()
	ss, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := ss.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Stop() })
	return ss
}

func network(t *testing.T, cutAt time.Duration) *topo.Network {
	link := func(from, to string, rate sim.RateSchedule, queue sim.Limit) sim.LinkConfig {
		return sim.LinkConfig{Name: from + "-" + to, From: from, To: to, Rate: rate, Delay: 5 * time.Millisecond, Queue: queue}
	}
	pkts := sim.Limit{Unit: sim.LimitPackets, Value: 100}
	n, err := topo.Build(context.Background(), topo.Spec{
		Links: []sim.LinkConfig{
			link("pub", "sfu", sim.ConstantRate(100e6), pkts), link("sfu", "pub", sim.ConstantRate(100e6), pkts),
			link("sfu", "sub", sim.RateSchedule{{At: 0, Bps: 100e6}, {At: cutAt, Bps: 700e3}}, sim.Limit{Unit: sim.LimitTime, Value: 0.1}),
			link("sub", "sfu", sim.ConstantRate(100e6), pkts),
		},
		Hosts: []topo.HostSpec{{Name: "pub", Node: "pub"}, {Name: "sfu", Node: "sfu"}, {Name: "sub", Node: "sub"}},
		Flows: []topo.FlowSpec{{Name: "up", Src: "pub", Dst: "sfu", Path: []string{"pub", "sfu"}},
			{Name: "down", Src: "sfu", Dst: "sub", Path: []string{"sfu", "sub"}}},
		Duration: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// One session on a free path reaches the top layer; with the subscriber's downlink cut below
// the top layer's rate the SFU forwards a lower one.
func TestSessionTopLayerThenCut(t *testing.T) {
	if testing.Short() {
		t.Skip("builds network namespaces and runs strata (root)")
	}
	const cutAt = 6 * time.Second
	bin := emutest.BuildStrata(t)
	net := network(t, cutAt)
	u := &scenario.SFU{Node: "sfu", Policy: "bwe", Sessions: []scenario.SFUSession{{Name: "s",
		Layers: []float64{150e3, 250e3, 800e3}, Path: []string{"pub", "sfu", "sub"}, Stop: 30 * time.Second}}}
	rec := emutest.NewRecorder()
	net.Start(rec.T0)
	ss := startSession(t, bin, net, u, rec, 20*time.Second)
	pids := ss.pids()
	up := rec.Now()
	if !waitFor(cutAt-up, func() bool { return ss.Forwarding()["s"] == 3 }) {
		t.Fatalf("the subscriber did not reach the top layer on a free path within %v of joining (layer %d); %+v",
			(cutAt - up).Round(time.Millisecond), ss.Forwarding()["s"], ss.Summaries())
	}
	t.Logf("top layer %v after the session was up (at %v)", (rec.Now() - up).Round(time.Millisecond), up.Round(time.Millisecond))
	time.Sleep(cutAt - rec.Now()) // the top layer is 1.2 Mbit/s, the middle one 0.4
	if !waitFor(10*time.Second, func() bool { l := ss.Forwarding()["s"]; return l > 0 && l < 3 }) {
		t.Fatalf("the SFU still forwards layer %d 10 s after the cut to 700 kbit/s", ss.Forwarding()["s"])
	}
	t.Logf("layer %d %v after the cut", ss.Forwarding()["s"], (rec.Now() - cutAt).Round(time.Millisecond))
	time.Sleep(time.Second)
	if err := ss.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	sum := ss.Summaries()
	t.Logf("summary %s", summaryText(sum))
	down := net.FlowStats("down")
	t.Logf("downlink, network side: %d packets sent, %d delivered, %d dropped", down.SentPackets, down.RecvPackets, down.Dropped)
	l := sum[0].Layers
	if len(l) != 3 || l[2].Sent == 0 || l[0].Sent+l[1].Sent == 0 {
		t.Errorf("want packets of the top layer and of a lower one: %s", summaryText(sum))
	}
	for _, x := range l {
		if x.Lost < 0 || x.Lost > x.Sent {
			t.Errorf("layer %d: lost %d of %d", x.Layer, x.Lost, x.Sent)
		}
	}
	if rec.Total() == 0 {
		t.Error("no goodput recorded")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("strata process %d still there after Stop (%v)", pid, err)
		}
	}
}

func summaryText(sum []metrics.SessionSummary) string {
	var b strings.Builder
	for _, s := range sum {
		fmt.Fprintf(&b, "%s:", s.Name)
		for _, l := range s.Layers {
			per := math.NaN()
			if l.PER != nil {
				per = *l.PER
			}
			fmt.Fprintf(&b, " [layer %d sent %d lost %d PER %.3f goodput %.0f bit/s switch dropped %d]", l.Layer, l.Sent, l.Lost, per, l.GoodputBps, l.SwitchDropped)
		}
	}
	return b.String()
}

func waitFor(limit time.Duration, ok func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// pids are the PIDs of strata's processes.
func (s *Sessions) pids() []int {
	var out []int
	for _, p := range s.procs {
		out = append(out, p.PID())
	}
	return out
}

func TestNewNeedsEveryHost(t *testing.T) {
	u := &scenario.SFU{Node: "sfu", Policy: "bwe", Sessions: []scenario.SFUSession{{Name: "s",
		Layers: []float64{150e3}, Path: []string{"pub", "sfu", "sub"}, Stop: time.Second}}}
	_, err := New(Env{SFU: u, SFUHost: nil, Binary: "strata", Clock: emutest.Clock{}})
	if err == nil || !strings.Contains(err.Error(), "host") {
		t.Errorf("no SFU host: %v", err)
	}
	_, err = New(Env{SFU: u, SFUHost: &topo.Host{}, Binary: "strata", Clock: emutest.Clock{}})
	if err == nil || !strings.Contains(err.Error(), "session s has no publisher or subscriber host") {
		t.Errorf("no session hosts: %v", err)
	}
	u.Sessions[0].Subscriber = scenario.SubscriberBrowser
	_, err = New(Env{SFU: u, SFUHost: &topo.Host{}, Binary: "strata", Clock: emutest.Clock{}, Chromium: "/no/chromium"})
	if err == nil || !strings.Contains(err.Error(), "session s: a browser subscriber needs headless Chromium at /no/chromium") {
		t.Errorf("no Chromium: %v", err)
	}
}

// A server that cannot start fails Start with its reason, and leaves no process behind.
func TestStartFailsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds network namespaces (root)")
	}
	net := network(t, time.Hour)
	bin := filepath.Join(t.TempDir(), "strata")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho no such server >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	u := &scenario.SFU{Node: "sfu", Policy: "bwe", Sessions: []scenario.SFUSession{{Name: "s",
		Layers: []float64{150e3, 250e3, 800e3}, Path: []string{"pub", "sfu", "sub"}, Stop: 30 * time.Second}}}
	ss, err := New(Env{SFU: u, SFUHost: net.Host("sfu"), Binary: bin, Clock: emutest.Clock{T0: time.Now()},
		Sessions: []Session{{Name: "s", Pub: net.Host("pub"), Sub: net.Host("sub")}}})
	if err != nil {
		t.Fatal(err)
	}
	err = ss.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no such server") {
		t.Fatalf("Start: %v, want the server's own words", err)
	}
	for _, pid := range ss.pids() {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still there", pid)
		}
	}
}
