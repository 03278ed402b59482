package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func constLink(bps float64) ShareLink { return ShareLink{At: []time.Duration{0}, Bps: []float64{bps}} }

func TestFairSharesDumbbell(t *testing.T) {
	end := 100 * time.Second
	flows := []ShareFlow{
		{Start: 0, Stop: end, Links: []int{0, 1}},
		{Start: 50 * time.Second, Stop: end, Links: []int{0, 1}},
	}
	links := []ShareLink{constLink(100e6), constLink(10e6)}
	share, by := FairShares(flows, links, end)
	// Flow 0 is alone for 50 s (10 Mbit/s) then shares (5): mean 7.5.
	if !near(share[0], 7.5e6, 1) || !near(share[1], 5e6, 1) {
		t.Fatalf("shares %v", share)
	}
	if by[0] != 1 || by[1] != 1 {
		t.Fatalf("bottlenecks %v", by)
	}
}

func TestFairSharesParkingLot(t *testing.T) {
	// Link 0 (4 Mbit/s) carries the long flow and flow A; link 1 (10 Mbit/s)
	// carries the long flow and flow B. Max-min: long = A = 2, B = 8.
	end := 10 * time.Second
	flows := []ShareFlow{
		{Stop: end, Links: []int{0, 1}},
		{Stop: end, Links: []int{0}},
		{Stop: end, Links: []int{1}},
	}
	share, by := FairShares(flows, []ShareLink{constLink(4e6), constLink(10e6)}, end)
	if !near(share[0], 2e6, 1) || !near(share[1], 2e6, 1) || !near(share[2], 8e6, 1) {
		t.Fatalf("shares %v", share)
	}
	if by[0] != 0 || by[2] != 1 {
		t.Fatalf("bottlenecks %v", by)
	}
}

func TestFairSharesDemandAndSchedule(t *testing.T) {
	end := 20 * time.Second
	link := ShareLink{At: []time.Duration{0, 10 * time.Second}, Bps: []float64{2e6, 1e6}}
	flows := []ShareFlow{
		{Stop: end, Links: []int{0}, Demand: 300e3}, // a CBR flow takes only its rate
		{Stop: end, Links: []int{0}},
	}
	share, _ := FairShares(flows, []ShareLink{link}, end)
	if !near(share[0], 300e3, 1) || !near(share[1], (1.7e6+0.7e6)/2, 1) {
		t.Fatalf("shares %v", share)
	}
}

func TestJainAndPercentile(t *testing.T) {
	if j := Jain([]float64{1, 1, 1}); j != 1 {
		t.Fatalf("equal shares %v", j)
	}
	if j := Jain([]float64{1, 0, 0, 0}); !near(j, 0.25, 1e-12) {
		t.Fatalf("one takes all %v", j)
	}
	if !math.IsNaN(Jain(nil)) {
		t.Fatal("empty Jain")
	}
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if Percentile(xs, 50) != 5 || Percentile(xs, 95) != 10 || Percentile(xs, 10) != 1 {
		t.Fatal("percentiles wrong")
	}
}

func TestRampup(t *testing.T) {
	interval := 100 * time.Millisecond
	st := &sim.FlowStats{Start: time.Second, Stop: 10 * time.Second, BinRecv: make([]int64, 101)}
	// Linear ramp from 1 s to 3 s up to 1 Mbit/s, then flat.
	for b := 10; b < 100; b++ {
		rate := 1e6
		if b < 30 {
			rate = 1e6 * float64(b-10) / 20
		}
		st.BinRecv[b] = int64(rate * interval.Seconds() / 8)
	}
	r, ok := rampup(st, 5e6, 10*time.Second, interval)
	// The 500 ms mean reaches 0.9 Mbit/s when the window covers bins whose
	// mean is 0.9: around 2.0–2.1 s after the start.
	if !ok || r < 1.9 || r > 2.2 {
		t.Fatalf("rampup %v %v", r, ok)
	}
	// A fair share below the steady rate lowers the bar.
	r2, _ := rampup(st, 0.5e6, 10*time.Second, interval)
	if r2 >= r {
		t.Fatalf("rampup with lower share %v, not below %v", r2, r)
	}
}

// Browser flows are media flows for Jain's index, beside strata's own.
func TestJainCountsBrowserFlowsAsMedia(t *testing.T) {
	flows := []FlowSummary{
		{Name: "chrome-1", Kind: "browser", Bottleneck: "b", FairShareRatio: 0.6},
		{Name: "chrome-2", Kind: "browser", Bottleneck: "b", FairShareRatio: 0.8},
		{Name: "tcp", Kind: "tcp", Bottleneck: "b", FairShareRatio: 1.2},
	}
	media, all, link := jainByBottleneck(flows)
	if media == nil || all == nil || link != "b" {
		t.Fatalf("media %v all %v link %q", media, all, link)
	}
	if want := Jain([]float64{0.6, 0.8}); math.Abs(*media-want) > 1e-4 {
		t.Fatalf("media index %v, want %v", *media, want)
	}
}
