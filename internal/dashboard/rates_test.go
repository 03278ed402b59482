package dashboard

import (
	"testing"
	"time"
)

// TestRatesFromCounterDeltas feeds a synthetic counter sequence and checks every rate.
func TestRatesFromCounterDeltas(t *testing.T) {
	tr := newRateTracker()
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at   time.Duration
		c    counts
		want rate
	}{
		{0, counts{0, 0}, rate{}},                                       // first sample: no rate yet
		{time.Second, counts{125_000, 62_500}, rate{1e6, 500e3}},        // 1 Mbit/s in, 500 kbit/s out
		{1200 * time.Millisecond, counts{999_999, 1}, rate{1e6, 500e3}}, // too soon: the last rate
		{3 * time.Second, counts{375_000, 62_500}, rate{1e6, 0}},        // 250 kB over 2 s; nothing out
		{3500 * time.Millisecond, counts{10, 10}, rate{}},               // counters went back: start over
		{4500 * time.Millisecond, counts{25_010, 12_510}, rate{200e3, 100e3}},
	}
	for i, s := range steps {
		if got := tr.update(7, s.c, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: rate %+v, want %+v", i, got, s.want)
		}
	}
	tr.update(8, counts{}, t0)
	tr.forget(map[uint64]bool{8: true})
	if _, ok := tr.entries[7]; ok || len(tr.entries) != 1 {
		t.Errorf("entries after forget: %v, want only 8", tr.entries)
	}
}
