package sim

import (
	"math"
	"testing"
)

func TestRandomLossRate(t *testing.T) {
	m := newLossModel(LossConfig{Model: "random", P: 0.05}, NewRNG(7, "x"))
	const n = 200000
	lost := 0
	for i := 0; i < n; i++ {
		if m.lose() {
			lost++
		}
	}
	// Binomial standard deviation is ~0.0005; allow 5 sigma.
	if got := float64(lost) / n; math.Abs(got-0.05) > 0.0025 {
		t.Fatalf("loss %v, want 0.05", got)
	}
}

func TestGilbertElliottRateAndBursts(t *testing.T) {
	cfg := LossConfig{Model: "gilbert-elliott", P: 0.01, R: 0.25, LossGood: 0, LossBad: 1}
	m := newLossModel(cfg, NewRNG(7, "ge"))
	const n = 400000
	lost, bursts, run := 0, 0, 0
	for i := 0; i < n; i++ {
		if m.lose() {
			lost++
			run++
			continue
		}
		if run > 0 {
			bursts++
			run = 0
		}
	}
	want := cfg.MeanLoss() // 0.01/0.26
	if got := float64(lost) / n; math.Abs(got-want) > 0.1*want {
		t.Fatalf("loss %v, want %v", got, want)
	}
	// With LossBad = 1 a burst is a stay in Bad: geometric with mean 1/R = 4.
	if mean := float64(lost) / float64(bursts); math.Abs(mean-4) > 0.3 {
		t.Fatalf("mean burst %v, want 4", mean)
	}
}

func TestLossConfigValidate(t *testing.T) {
	for _, c := range []LossConfig{{Model: "random", P: 1.5}, {Model: "bogus"}, {Model: "gilbert-elliott", P: 0.1}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestLossIsDeterministicPerSeed(t *testing.T) {
	draw := func(seed uint64) []bool {
		m := newLossModel(LossConfig{Model: "random", P: 0.3}, NewRNG(seed, "link/x/loss"))
		out := make([]bool, 64)
		for i := range out {
			out[i] = m.lose()
		}
		return out
	}
	a, b, c := draw(1), draw(1), draw(2)
	same := func(x, y []bool) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) || same(a, c) {
		t.Fatal("loss draws not determined by the seed")
	}
}
