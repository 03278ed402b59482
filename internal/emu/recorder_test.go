package emu

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// The recorder bins by the run's clock and clamps late calls into the last
// interval, as the simulator's stats do.
func TestRecorderBins(t *testing.T) {
	c := clock{t0: time.Now().Add(-250 * time.Millisecond)}
	r := newRecorder(c, 3, 100*time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.Goodput(100) }()
	}
	wg.Wait()
	r.Target(1e6)
	r.RTT(20 * time.Millisecond)
	late := newRecorder(clock{t0: time.Now().Add(-time.Hour)}, 3, 100*time.Millisecond)
	late.Cwnd(3000)

	st := &sim.FlowStats{BinGood: make([]int64, 3), BinTarget: make([]float64, 3), BinCwnd: make([]float64, 3), BinRTT: make([]float64, 3)}
	r.fill(st)
	if st.GoodputBytes != 400 || st.BinGood[2] != 400 {
		t.Fatalf("goodput %d, bins %v; want 400 in bin 2", st.GoodputBytes, st.BinGood)
	}
	if st.BinTarget[2] != 1e6 || !math.IsNaN(st.BinTarget[0]) || st.BinRTT[2] != 0.02 {
		t.Fatalf("target %v rtt %v", st.BinTarget, st.BinRTT)
	}
	late.fill(st)
	if st.BinCwnd[2] != 3000 {
		t.Fatalf("a call after the run's end went to %v, want the last bin", st.BinCwnd)
	}
}
