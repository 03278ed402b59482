package lab

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// The fidelity test runs the same TCP dumbbell in strata's simulator and in
// ns-3 3.37 (tools/ns3/tcp-dumbbell.cc): six NewReno or Cubic flows with
// SACK, 2 or 10 Mbit/s, RTT about 40 or 160 ms, a 100-packet drop-tail
// bottleneck, flows starting uniformly in the first second, six seeds. It
// compares what does not depend on event-ordering details, measured after a
// warm-up (the slow-start transient is where the two TCP implementations
// differ most): total utilisation, Jain's index, and the per-flow shares
// sorted by size and averaged over the seeds. The ns-3 program runs the same
// TCP as strata (ssthresh from FlightSize, RFC 9438 Cubic; its comments list
// each alignment), so all three carry the bounds everywhere.

type dumbbell struct {
	tcp     string
	rate    string
	bps     float64
	delayMs int // bottleneck one-way delay; access and egress add 1 ms each
	flows   int
	dur     time.Duration
	seed    int
	noSACK  bool
	warmup  time.Duration
}

type outcome struct {
	Util    float64   `json:"util"`
	Wall    float64   `json:"wall_s"`
	Goodput []float64 `json:"goodput_bytes"`
}

func (d dumbbell) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: fidelity\nduration: %s\nlinks:\n", d.dur)
	fmt.Fprintf(&b, "  - {name: bottleneck, from: r1, to: r2, rate: %s, delay: %dms, queue: 100pkt, overhead: 2B, duplex: true}\n", d.rate, d.delayMs)
	for i := 0; i < d.flows; i++ {
		fmt.Fprintf(&b, "  - {name: a%d, from: s%d, to: r1, rate: 100Mbps, delay: 1ms, queue: 1000pkt, overhead: 2B, duplex: true}\n", i, i)
		fmt.Fprintf(&b, "  - {name: e%d, from: r2, to: d%d, rate: 100Mbps, delay: 1ms, queue: 1000pkt, overhead: 2B, duplex: true}\n", i, i)
	}
	b.WriteString("flows:\n")
	for i := 0; i < d.flows; i++ {
		fmt.Fprintf(&b, "  - {name: f%d, cc: %s, path: [s%d, r1, r2, d%d], start_jitter: 1s, sack: %v, params: {initial_window: 10}}\n",
			i, d.tcp, i, i, !d.noSACK)
	}
	return b.String()
}

func (d dumbbell) runStrata(t *testing.T) outcome {
	f, err := scenario.Parse("fidelity.yaml", []byte(d.yaml()))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := f.Runs[0].Build(uint64(d.seed))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := sm.Run(); err != nil {
		t.Fatal(err)
	}
	out := outcome{Wall: time.Since(start).Seconds()}
	from := int(d.warmup / sm.Config().Interval)
	to := int(d.dur / sm.Config().Interval)
	bn := sm.Link("bottleneck").Stats
	var bytes int64
	for _, b := range bn.Bytes[from:to] {
		bytes += b
	}
	out.Util = float64(bytes) * 8 / bn.Rate.Bits(d.warmup, d.dur)
	for _, fl := range sm.Flows() {
		var g int64
		for _, b := range fl.Stats().BinGood[from:to] {
			g += b
		}
		out.Goodput = append(out.Goodput, float64(g))
	}
	return out
}

func (d dumbbell) runNS3(t *testing.T, bin string) outcome {
	cmd := exec.Command(bin, "--flows="+fmt.Sprint(d.flows), "--rate="+d.rate, "--delay="+fmt.Sprint(d.delayMs),
		"--queue=100", "--tcp="+d.tcp, "--duration="+fmt.Sprint(d.dur.Seconds()), "--seed="+fmt.Sprint(d.seed), "--jitter=1", "--sack="+fmt.Sprint(!d.noSACK), "--warmup="+fmt.Sprint(d.warmup.Seconds()))
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("ns-3 %v: %v", cmd.Args, err)
	}
	var out outcome
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("ns-3 output %q: %v", data, err)
	}
	return out
}

// ns3Binary builds tools/ns3/tcp-dumbbell.cc into the user's cache (outside
// the source tree) unless an up-to-date build is there.
func ns3Binary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "strata", "ns3", "tcp-dumbbell")
	src := filepath.Join("..", "..", "tools", "ns3", "tcp-dumbbell.cc")
	sst, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if bst, err := os.Stat(bin); err == nil && bst.ModTime().After(sst.ModTime()) {
		return bin
	}
	out, err := exec.Command("sh", filepath.Join("..", "..", "tools", "ns3", "build.sh"), bin).CombinedOutput()
	if err != nil {
		t.Fatalf("building the ns-3 peer failed: ns-3 3.37 is missing or broken; `make test` installs it "+
			"(apt-get install -y libns3-dev g++ pkg-config).\n%s", out)
	}
	return bin
}

func shares(goodput []float64) []float64 {
	total := 0.0
	for _, g := range goodput {
		total += g
	}
	out := make([]float64, len(goodput))
	for i, g := range goodput {
		out[i] = g / total
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	return out
}

func TestFidelityAgainstNS3(t *testing.T) {
	bin := ns3Binary(t)
	const seeds = 6
	type config struct {
		tcp, rate string
		bps       float64
		delay     int
	}
	var configs []config
	for _, tcp := range []string{"newreno", "cubic"} {
		for _, r := range []struct {
			s string
			b float64
		}{{"2Mbps", 2e6}, {"10Mbps", 10e6}} {
			for _, delay := range []int{18, 78} { // RTT about 40 ms and 160 ms
				configs = append(configs, config{tcp, r.s, r.b, delay})
			}
		}
	}
	type result struct{ strata, ns3 outcome }
	results := make([][]result, len(configs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, c := range configs {
		results[i] = make([]result, seeds)
		for s := 0; s < seeds; s++ {
			// 10 Mbit/s flows converge within seconds; at 2 Mbit/s the
			// 100-packet queue is 600 ms deep and convergence takes longer.
			dur, warmup := 60*time.Second, 20*time.Second
			if c.bps < 5e6 {
				dur, warmup = 90*time.Second, 30*time.Second
			}
			d := dumbbell{tcp: c.tcp, rate: c.rate, bps: c.bps, delayMs: c.delay, flows: 6, dur: dur, seed: s + 1, warmup: warmup}
			wg.Add(1)
			go func(i, s int) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				results[i][s] = result{strata: d.runStrata(t), ns3: d.runNS3(t, bin)}
			}(i, s)
		}
	}
	wg.Wait()
	for i, c := range configs {
		name := fmt.Sprintf("%s/%s/%dms", c.tcp, c.rate, c.delay)
		var utilS, utilN, jainS, jainN float64
		shareS := make([]float64, 6)
		shareN := make([]float64, 6)
		for _, r := range results[i] {
			utilS += r.strata.Util / seeds
			utilN += r.ns3.Util / seeds
			jainS += metrics.Jain(r.strata.Goodput) / seeds
			jainN += metrics.Jain(r.ns3.Goodput) / seeds
			for k, v := range shares(r.strata.Goodput) {
				shareS[k] += v / seeds
			}
			for k, v := range shares(r.ns3.Goodput) {
				shareN[k] += v / seeds
			}
		}
		t.Logf("%s: utilisation strata %.4f ns-3 %.4f; Jain strata %.3f ns-3 %.3f; shares strata %.3f ns-3 %.3f",
			name, utilS, utilN, jainS, jainN, shareS, shareN)
		if math.Abs(utilS-utilN) > 0.01 {
			t.Errorf("%s: utilisation differs by more than 1%%: strata %.4f, ns-3 %.4f", name, utilS, utilN)
		}
		if math.Abs(jainS-jainN) > 0.03 {
			t.Errorf("%s: Jain's index differs by more than 0.03: strata %.3f, ns-3 %.3f", name, jainS, jainN)
		}
		// Both sides run the same TCP (tools/ns3/tcp-dumbbell.cc says how
		// ns-3 was aligned), so the 10% applies everywhere.
		const tol = 0.10
		for k := range shareS {
			if math.Abs(shareS[k]-shareN[k]) > tol*shareN[k] {
				t.Errorf("%s: share of flow ranked %d differs by more than %.0f%%: strata %.3f, ns-3 %.3f", name, k+1, 100*tol, shareS[k], shareN[k])
			}
		}
	}
}

// TestWallTimeAgainstNS3 reports how long both simulators take for the
// issue's yardstick: six flows, 10 Mbit/s, 100 s. Only a generous bound is
// asserted; the figures go to the log.
func TestWallTimeAgainstNS3(t *testing.T) {
	bin := ns3Binary(t)
	d := dumbbell{tcp: "newreno", rate: "10Mbps", bps: 10e6, delayMs: 20, flows: 6, dur: 100 * time.Second, seed: 1}
	s := d.runStrata(t)
	n := d.runNS3(t, bin)
	t.Logf("100 s, 6 flows, 10 Mbit/s: strata %.3f s, ns-3 %.3f s (%.0fx)", s.Wall, n.Wall, n.Wall/s.Wall)
	if s.Wall > n.Wall {
		t.Errorf("strata (%.3f s) slower than ns-3 (%.3f s)", s.Wall, n.Wall)
	}
}
