package stats

import (
	"testing"
	"time"
)

func TestRateMeter(t *testing.T) {
	m := NewRateMeter(500*time.Millisecond, 50)
	if _, ok := m.Rate(0); ok {
		t.Error("rate known before any sample")
	}
	for i := 0; i <= 100; i++ { // 1200 bytes every 10 ms = 960 kbit/s
		m.Add(time.Duration(i)*10*time.Millisecond, 1200)
	}
	r, ok := m.Rate(time.Second)
	if !ok || r < 0.95*960e3 || r > 1.05*960e3 {
		t.Errorf("rate %.0f (%v), want ≈ 960 kbit/s", r, ok)
	}
	m.Add(200*time.Millisecond, 1e6) // older than the window: ignored
	if r2, _ := m.Rate(time.Second); r2 != r {
		t.Errorf("a sample older than the window changed the rate: %.0f → %.0f", r, r2)
	}
	if r, _ := m.Rate(10 * time.Second); r != 0 {
		t.Errorf("rate after a long silence %.0f, want 0", r)
	}
	if m.Sum(10*time.Second) != 0 {
		t.Error("sum after a long silence should be 0")
	}
}

func TestMinFilter(t *testing.T) {
	f := NewMinFilter(3)
	for _, v := range []time.Duration{5, 1, 7, 8, 9} {
		f.Add(v)
	}
	if f.Min() != 7 || f.Len() != 3 {
		t.Errorf("min of the last 3 of 5,1,7,8,9 = %v (len %d), want 7", f.Min(), f.Len())
	}
}

func TestMinHistoryRollsOver(t *testing.T) {
	h := NewMinHistory(3, time.Minute)
	h.Add(0, 10)
	h.Add(30*time.Second, 5)
	h.Add(time.Minute, 20)
	h.Add(2*time.Minute, 30)
	if h.Min() != 5 {
		t.Errorf("min over three buckets = %v, want 5", h.Min())
	}
	h.Add(3*time.Minute, 40) // the first bucket (min 5) ages out
	if h.Min() != 20 {
		t.Errorf("after rollover min = %v, want 20", h.Min())
	}
	h.Add(2*time.Minute, 1) // from the past: only the newest bucket takes it
	if h.Min() != 1 {
		t.Errorf("min = %v, want 1", h.Min())
	}
}
