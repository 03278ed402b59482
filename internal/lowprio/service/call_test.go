// The call measures delays in real time: under the race detector, which slows Pion several
// times over, it would measure the detector. The service's other tests run under -race.

//go:build !race

package service_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
	"github.com/strata-rtc/strata/internal/rig"
	"github.com/strata-rtc/strata/internal/sim"
)

// The call: a client behind a 2 Mbit/s link each way (20 ms one way: 40 ms RTT, a 500 ms
// drop-tail buffer, as home routers have) in an echotest call with 1 Mbit/s of VP8, first alone,
// then with a download of a generated stream on the same PeerConnection.
const (
	callRate   = 2e6
	callDelay  = 20 * time.Millisecond
	callBuffer = 0.5 // seconds at the link's rate
	callVideo  = 1e6
	callSettle = 5 * time.Second  // the call's start, left out of the measurement
	callAlone  = 15 * time.Second // the call alone, settle included
	callWith   = 25 * time.Second // the call with the transfer
	callRampUp = 3 * time.Second  // the transfer's start, left out of its goodput
	callTarget = 100 * time.Millisecond
	apiPort    = 8088
	callBin    = 100 * time.Millisecond // the network's statistics interval (topo's default)
)

// callResult is one run: the video alone and with the transfer, the transfer's goodput, and the
// emulated downlink's mean queueing delay (every packet: video and transfer) in each window.
type callResult struct {
	Share                 string
	Alone, With           videoStats
	Goodput               float64
	QueueAlone, QueueWith time.Duration
	LinkAlone, LinkWith   float64 // the downlink's delivered bit/s, every packet
}

// TestCallWithTransfer: a LEDBAT download next to a video call on one PeerConnection through a
// 2 Mbit/s link keeps the echoed video's rate and its 95th-percentile delay within LEDBAT's
// target of the call alone, and takes a real share of what the video leaves. With
// LOWPRIO_CALL_SHARES=headroom,none (make lab-lowprio) it also runs the other sharing modes and
// prints the table of docs/RESULTS.md; only headroom (the default) is held to the claims.
func TestCallWithTransfer(t *testing.T) {
	emutest.NeedRoot(t)
	bin := emutest.BuildStrata(t)
	shares := strings.Split(os.Getenv("LOWPRIO_CALL_SHARES"), ",")
	if shares[0] == "" {
		shares = []string{"headroom"}
	}
	var results []callResult
	for _, share := range shares {
		t.Run(share, func(t *testing.T) {
			r := runCall(t, bin, share)
			if share == "headroom" {
				// On a busy machine the endpoints' processes, not the network, can hold packets
				// for tens of milliseconds (the emulator's self-test has the same trouble), so a
				// failed run is repeated once, saying so; the test fails when both do.
				if fails := callClaims(r); len(fails) > 0 {
					t.Logf("run 1 (load average %s): %s; once more", loadAverage(), strings.Join(fails, "; "))
					r = runCall(t, bin, share)
					for _, f := range callClaims(r) {
						t.Error(f)
					}
				}
			}
			results = append(results, r)
		})
	}
	for _, line := range callTable(results) {
		t.Log(line)
	}
}

// callClaims holds a run to the claims: the video's rate and p95 delay kept within LEDBAT's
// target of the call alone, and a real share of the spare capacity taken. It returns what failed.
func callClaims(r callResult) []string {
	var fails []string
	if r.With.P95 > r.Alone.P95+callTarget {
		fails = append(fails, fmt.Sprintf("the video's p95 delay went from %v alone to %v with the transfer, more than LEDBAT's %v target above",
			r.Alone.P95, r.With.P95, callTarget))
	}
	if r.With.Rate < 0.9*r.Alone.Rate {
		fails = append(fails, fmt.Sprintf("the video's rate fell from %.0f to %.0f bit/s with the transfer", r.Alone.Rate, r.With.Rate))
	}
	if spare := callRate - r.Alone.Rate; r.Goodput < 0.2*spare {
		fails = append(fails, fmt.Sprintf("the transfer moved %.0f bit/s, less than a fifth of the %.0f bit/s the video leaves", r.Goodput, spare))
	}
	return fails
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// callTable is the results as a Markdown table.
func callTable(rs []callResult) []string {
	out := []string{
		"| share | transfer | video kbit/s | video delay p50 / p95 (ms) | downlink kbit/s (all packets) | downlink queueing, mean (ms) | transfer goodput kbit/s |",
		"|---|---|---|---|---|---|---|",
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, r := range rs {
		out = append(out,
			fmt.Sprintf("| %s | none | %.0f | %.0f / %.0f | %.0f | %.0f | — |", r.Share, r.Alone.Rate/1e3, ms(r.Alone.P50), ms(r.Alone.P95), r.LinkAlone/1e3, ms(r.QueueAlone)),
			fmt.Sprintf("| %s | LEDBAT get | %.0f | %.0f / %.0f | %.0f | %.0f | %.0f |", r.Share, r.With.Rate/1e3, ms(r.With.P50), ms(r.With.P95), r.LinkWith/1e3, ms(r.QueueWith), r.Goodput/1e3))
	}
	return out
}

// runCall runs one call with strata's lowprio.share set to share.
func runCall(t *testing.T, bin, share string) callResult {
	n := callNetwork(t)
	hs, hc := n.Host("hs"), n.Host("hc")
	t0 := time.Now()
	n.Start(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := fmt.Sprintf("http://%s/janus", netip.AddrPortFrom(hs.Addr(), apiPort))
	log := startStrata(ctx, t, bin, hs, hc, api, share)
	c, err := newCallClient(hc, t0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	jc, err := janusclient.Dial(ctx, api, janusclient.WithHTTPClient(hostHTTP(hc)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = jc.Close() }()
	if err := c.call(ctx, jc); err != nil {
		t.Fatal(err)
	}
	videoCtx, stopVideo := context.WithCancel(ctx)
	defer stopVideo()
	go func() {
		if err := c.sendVideo(videoCtx, callVideo); err != nil {
			t.Errorf("video: %v", err)
		}
	}()
	up := time.Since(t0)
	time.Sleep(callAlone)
	alone := [2]time.Duration{up + callSettle, time.Since(t0)}
	tr := startTransfer(ctx, t, c, t0)
	time.Sleep(callWith)
	with := [2]time.Duration{alone[1] + callRampUp, time.Since(t0)}
	tr.stop()
	stopVideo()
	time.Sleep(500 * time.Millisecond) // strata logs how the transfer ended
	if b, err := os.ReadFile(log); err == nil {
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, "low-priority transfer ended") {
				t.Log("strata: " + strings.TrimSpace(line))
			}
		}
	}
	r := callResult{Share: share, Alone: c.video(alone[0], alone[1]), With: c.video(with[0], with[1]), Goodput: tr.goodput(with[0], with[1])}
	if st := n.FlowStats("call"); st != nil {
		r.QueueAlone, r.QueueWith = meanQueue(st, alone), meanQueue(st, with)
		r.LinkAlone, r.LinkWith = linkRate(st, alone), linkRate(st, with)
		t.Logf("downlink: %d packets sent, %d delivered, %d dropped; uplink %d dropped", st.SentPackets, st.RecvPackets, st.Dropped, st.ControlDropped)
	}
	c.mu.Lock()
	t.Logf("sent %d frames, %d bytes; %d echoed packets", c.sentFrames, c.sentBytes, len(c.packets))
	c.mu.Unlock()
	t.Logf("share %s: alone %+v, with %+v, transfer %.0f bit/s", share, r.Alone, r.With, r.Goodput)
	return r
}

func callNetwork(t *testing.T) *topo.Network {
	link := func(from, to string) sim.LinkConfig {
		return sim.LinkConfig{Name: from + "-" + to, From: from, To: to, Rate: sim.ConstantRate(callRate), Delay: callDelay,
			Queue: sim.Limit{Unit: sim.LimitTime, Value: callBuffer}}
	}
	n, err := topo.Build(context.Background(), topo.Spec{
		Links:    []sim.LinkConfig{link("srv", "cli"), link("cli", "srv")},
		Hosts:    []topo.HostSpec{{Name: "hs", Node: "srv"}, {Name: "hc", Node: "cli"}},
		Flows:    []topo.FlowSpec{{Name: "call", Src: "hs", Dst: "hc", Path: []string{"srv", "cli"}}},
		Duration: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// startStrata runs strata serve in hs's namespace with the echotest on and lowprio.share set,
// stopped by its PID when the test ends, and waits for its API (asked from hc, across the link).
func startStrata(ctx context.Context, t *testing.T, bin string, hs, hc endpoint.Host, api, share string) (log string) {
	dir := t.TempDir()
	extra := fmt.Sprintf("general:\n  log_level: info\nplugins:\n  echotest:\n    enabled: true\nlowprio:\n  share: %s\n", share)
	cfg, err := rig.WriteStrataConfig(dir, hs.Addr().String(), "", apiPort, extra)
	if err != nil {
		t.Fatal(err)
	}
	cmd := hs.Command(context.Background(), bin, "serve", "-config", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, err := rig.StartCommand("strata", cmd, filepath.Join(dir, "strata.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(2 * time.Second) })
	if err := p.WaitHTTP(ctx, hostHTTP(hc), strings.TrimSuffix(api, "/janus")+"/janus/info"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "strata.log")
}

// linkRate is the downlink's delivered rate in the window (IP packets).
func linkRate(st *sim.FlowStats, w [2]time.Duration) float64 {
	var sum int64
	first, end := int(w[0]/callBin), int(w[1]/callBin)
	for i := first; i < len(st.BinRecv) && i < end; i++ {
		sum += st.BinRecv[i]
	}
	return float64(sum) * 8 / (time.Duration(end-first) * callBin).Seconds()
}

// meanQueue is the mean queueing delay of the downlink's packets in the window.
func meanQueue(st *sim.FlowStats, w [2]time.Duration) time.Duration {
	var sum time.Duration
	var n int64
	for i := int(w[0] / callBin); i < len(st.BinQN) && i < int(w[1]/callBin); i++ {
		sum += st.BinQDelay[i]
		n += int64(st.BinQN[i])
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// download is the transfer: a get of a generated stream far longer than the run, its progress
// recorded.
type download struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []progressSample
}

type progressSample struct {
	at    time.Duration
	bytes uint64
}

func startTransfer(ctx context.Context, t *testing.T, c *callClient, t0 time.Time) *download {
	ch, err := c.pc.CreateDataChannel(dc.Label(dc.VerbGet, "gen:100000000000"), dc.Init())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &download{cancel: cancel, done: make(chan struct{})}
	opts := dc.Options{ProgressInterval: 100 * time.Millisecond, Progress: func(p dc.Progress) {
		d.mu.Lock()
		d.samples = append(d.samples, progressSample{time.Since(t0), p.Bytes})
		d.mu.Unlock()
	}}
	go func() {
		defer close(d.done)
		if _, err := dc.Receive(ctx, ch, discard{}, opts); err != nil && ctx.Err() == nil {
			t.Errorf("transfer: %v", err)
		}
	}()
	return d
}

func (d *download) stop() {
	d.cancel()
	<-d.done
}

// goodput is the transfer's rate between the samples nearest the window's ends.
func (d *download) goodput(from, to time.Duration) float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var a, b *progressSample
	for i := range d.samples {
		s := &d.samples[i]
		if a == nil && s.at >= from {
			a = s
		}
		if s.at <= to {
			b = s
		}
	}
	if a == nil || b == nil || b.at <= a.at {
		return 0
	}
	return float64(b.bytes-a.bytes) * 8 / (b.at - a.at).Seconds()
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
