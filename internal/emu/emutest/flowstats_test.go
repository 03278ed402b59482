package emutest

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

func TestLinkUseAndQueueQuantile(t *testing.T) {
	// 100 ms bins: 25 000 bytes per bin is 2 Mbit/s; the first and last bins are outside [0.1 s, 0.4 s).
	fs := &sim.FlowStats{BinRecv: []int64{0, 25_000, 12_500, 25_000, 0}}
	if got := LinkUse(fs, 2e6, 100*time.Millisecond, 400*time.Millisecond); got < 0.8333 || got > 0.8334 {
		t.Errorf("LinkUse %v, want 5/6", got)
	}
	if got := LinkUse(fs, 2e6, time.Second, 2*time.Second); got != 0 {
		t.Errorf("LinkUse with no bins in range: %v", got)
	}
	q := []float32{0.375, 0.125, 0.25, 0.625, 0.5} // exact in float32
	if got := QueueQuantile(q, 0.5); got != 375*time.Millisecond {
		t.Errorf("median %v, want 375ms", got)
	}
	if got := QueueQuantile(q, 1); got != 625*time.Millisecond || q[0] != 0.375 {
		t.Errorf("max %v (input %v), want 625ms and the input unsorted", got, q)
	}
	if QueueQuantile(nil, 0.95) != 0 {
		t.Error("quantile of nothing")
	}
}
