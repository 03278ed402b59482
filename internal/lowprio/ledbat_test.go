package lowprio

import (
	"slices"

	"github.com/strata-rtc/strata/cc/ledbat"
	"testing"
	"time"
)

// bottleneck is seed 002's path: 1 Mbit/s, 50 ms each way, a 60 KB buffer (480 ms at 1 Mbit/s,
// well above LEDBAT's 100 ms target).
func bottleneck() (*link, *link) { return path(50*time.Millisecond, 1e6, 60_000, 0, 0) }

func p95(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*95/100]
}

// Alone on a bottleneck, LEDBAT fills the link and keeps the queue's p95 within 20 ms of its
// target: RFC 6817's 100 ms and LEDBAT++'s 60 ms.
func TestLEDBATKeepsQueueNearTarget(t *testing.T) {
	for _, c := range []struct {
		name  string
		ctrl  *ledbat.Controller
		bound time.Duration
	}{
		{"RFC 6817", nil, 120 * time.Millisecond},
		{"LEDBAT++", ledbat.New(ledbat.WithMSS(1100), ledbat.WithPlusPlus()), 80 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			fwd, rev := bottleneck()
			fwd.queueFrom = 30 * time.Second // steady state: the window grows by about one MSS per RTT
			m := newSim(Config{}, NewSender(Config{}, c.ctrl), stream(16<<20, 8), fwd, rev)
			m.run(90*time.Second, nil)
			if m.s.Err() != nil || m.r.Err() != nil {
				t.Fatal(m.s.Err(), m.r.Err())
			}
			q := p95(fwd.queued)
			rate := float64(fwd.bytes[false]) * 8 / (m.now - fwd.queueFrom).Seconds()
			t.Logf("queue p95 %v over %d messages; throughput %.0f kbit/s", q, len(fwd.queued), rate/1e3)
			if q > c.bound {
				t.Errorf("queue p95 %v, want ≤ %v", q, c.bound)
			}
			if rate < 0.9e6 {
				t.Errorf("throughput %.0f bit/s: LEDBAT alone should fill the 1 Mbit/s link", rate)
			}
		})
	}
}

// An external rate cap (the server's GCC headroom) holds the transfer below it on a fast path.
func TestExternalRateCap(t *testing.T) {
	fwd, rev := path(20*time.Millisecond, 10e6, 0, 0, 0)
	fwd.queueFrom = 10 * time.Second
	s := NewSender(Config{}, nil)
	s.SetCap(0, 200e3)
	m := newSim(Config{}, s, stream(16<<20, 8), fwd, rev)
	m.run(40*time.Second, nil)
	rate := float64(fwd.bytes[false]) * 8 / (m.now - fwd.queueFrom).Seconds()
	t.Logf("%.0f kbit/s under a 200 kbit/s cap", rate/1e3)
	if rate > 200e3 || rate < 100e3 {
		t.Fatalf("%.0f bit/s under a 200 kbit/s cap", rate)
	}
}

// When a loss-based flow keeps the bottleneck's buffer nearly full, LEDBAT yields: it drops to
// its minimum window and takes a small share of the link.
func TestLEDBATYieldsToCrossTraffic(t *testing.T) {
	fwd, rev := bottleneck()
	m := newSim(Config{}, NewSender(Config{}, nil), stream(16<<20, 9), fwd, rev)
	m.run(40*time.Second, nil)
	alone := m.s.Stats().Acked
	m.crossFrom, m.crossUntil, m.crossBacklog = 40*time.Second, 100*time.Second, 50_000
	fwd.queueFrom = 50 * time.Second // after LEDBAT reacted
	m.run(100*time.Second, nil)
	share := float64(fwd.bytes[false]) / float64(fwd.bytes[false]+fwd.bytes[true])
	t.Logf("alone: %d bytes in 39 s; with cross traffic: LEDBAT share %.1f%%, cwnd %d, queue delay %v",
		alone, 100*share, m.s.Stats().Cwnd, m.s.Stats().QueueDelay)
	if m.s.Err() != nil {
		t.Fatal(m.s.Err())
	}
	if share > 0.1 {
		t.Errorf("LEDBAT took %.1f%% of the link next to a buffer-filling flow", 100*share)
	}
	// And it takes the link back once the other flow is gone.
	before := m.s.Stats().Acked
	m.run(160*time.Second, nil)
	if got := float64(m.s.Stats().Acked-before) * 8 / 60; got < 0.7e6 {
		t.Errorf("after the cross flow ended: %.0f bit/s", got)
	}
}
