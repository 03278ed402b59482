package rtpstats

import (
	"testing"
	"time"
)

const period20 = 20 * time.Millisecond

// feed sends frames with consecutive timestamps; arrival i is at base + i·20 ms + extra(i).
func feed(t *Timing, n int, ts0 uint32, extra func(i int) time.Duration) {
	for i := 0; i < n; i++ {
		t.Observe(ts0+uint32(i*960), time.Duration(i)*period20+extra(i)+time.Hour)
	}
}

func TestTimingOnTimeStream(t *testing.T) {
	tm := NewTiming(48000, period20)
	// Every tenth frame 5 ms late, every seventh 5 ms early: nothing is late, no gap.
	feed(tm, 500, 4294960000, func(i int) time.Duration {
		switch {
		case i%10 == 0:
			return 5 * time.Millisecond
		case i%7 == 0:
			return -5 * time.Millisecond
		}
		return 0
	})
	c := tm.Counts()
	if c.Frames != 500 || c.Late != 0 || c.Gaps != 0 || c.Resyncs != 0 {
		t.Fatalf("on-time stream across a timestamp wrap: %+v", c)
	}
	if p50 := c.Interarrival.QuantileMs(0.5); p50 != 21 {
		t.Errorf("inter-arrival p50 %v ms, want the 20 ms bucket (edge 21)", p50)
	}
	if m := tm.MaxLateness(); m > 10*time.Millisecond {
		t.Errorf("max lateness %v with ±5 ms jitter", m)
	}
}

func TestTimingCountsLateFramesAndGaps(t *testing.T) {
	tm := NewTiming(48000, period20)
	// Frames 100…104 are held back and arrive together with period20 105 (a mixer that stalled for
	// 100 ms and then caught up): 100 is 100 ms late, 101 80 ms, … 104 20 ms (not late: exactly one
	// period). One gap (the 120 ms before the burst).
	feed(tm, 300, 1000, func(i int) time.Duration {
		if i >= 100 && i < 105 {
			return time.Duration(105-i) * period20
		}
		return 0
	})
	c := tm.Counts()
	if c.Late != 4 || c.Gaps != 1 {
		t.Fatalf("late %d (want 4), gaps %d (want 1)", c.Late, c.Gaps)
	}
	if m := tm.MaxLateness(); m != 100*time.Millisecond {
		t.Errorf("max lateness %v, want 100ms", m)
	}
	if got := c.Lateness.MaxMs(); got != 101 {
		t.Errorf("lateness histogram max %v, want the 100 ms bucket", got)
	}
}

func TestTimingFollowsAShiftedStream(t *testing.T) {
	tm := NewTiming(48000, period20)
	// After period20 200 every period20 arrives 60 ms later for good (one hiccup, timestamps
	// continuous): late for at most two seconds (100 frames), then the reference has moved.
	feed(tm, 600, 0, func(i int) time.Duration {
		if i >= 200 {
			return 60 * time.Millisecond
		}
		return 0
	})
	c := tm.Counts()
	if c.Late == 0 || c.Late > 100 {
		t.Fatalf("late %d after a one-off 60 ms shift, want 1…100", c.Late)
	}
	// A sender that keeps falling behind (1 ms more every period20) makes frames late all along.
	drift := NewTiming(48000, period20)
	feed(drift, 600, 0, func(i int) time.Duration { return time.Duration(i) * time.Millisecond })
	if dc := drift.Counts(); dc.Late < 500 {
		t.Fatalf("falling behind 1 ms a period20: only %d late of 600", dc.Late)
	}
}

func TestTimingResyncsOnTimestampJump(t *testing.T) {
	tm := NewTiming(48000, period20)
	feed(tm, 50, 0, func(int) time.Duration { return 0 })
	// The source restarts with a timestamp 20 s back: not 20 s of lateness.
	for i := 0; i < 50; i++ {
		tm.Observe(uint32(i*960)-20*48000, time.Duration(50+i)*period20+time.Hour)
	}
	c := tm.Counts()
	if c.Resyncs != 1 || c.Late != 0 {
		t.Fatalf("timestamp jump: %+v", c)
	}
}

func TestHistogramWindows(t *testing.T) {
	var h Histogram
	if h.QuantileMs(0.5) != -1 || h.MaxMs() != -1 {
		t.Fatal("empty histogram has quantiles")
	}
	for i := 0; i < 99; i++ {
		h.Add(20 * time.Millisecond)
	}
	h.Add(2 * time.Second)
	if h.QuantileMs(0.5) != 21 || h.QuantileMs(0.99) != 21 || h.QuantileMs(1) != 500 || h.MaxMs() != 500 {
		t.Fatalf("quantiles %v %v %v max %v", h.QuantileMs(0.5), h.QuantileMs(0.99), h.QuantileMs(1), h.MaxMs())
	}
	snap := h
	h.Add(-time.Millisecond) // clamps to 0
	w := h.Since(&snap)
	if w.Count() != 1 || w.MaxMs() != 1 {
		t.Fatalf("window %v %v", w.Count(), w.MaxMs())
	}
	var sum TimingCounts
	a := TimingCounts{Frames: 3, Late: 1}
	a.Lateness.Add(30 * time.Millisecond)
	sum.Merge(&a)
	sum.Merge(&a)
	if d := sum.Since(&a); d.Frames != 3 || d.Late != 1 || d.Lateness.Count() != 1 {
		t.Fatalf("merge/since: %+v", d)
	}
}

func TestStreamReportsAudioTiming(t *testing.T) {
	s := New(Config{Kind: Audio, ClockRate: 48000}, 0)
	pkt := make([]byte, 20)
	pkt[0] = 0x80
	for i := 0; i < 100; i++ {
		pkt[3] = byte(i)
		ts := uint32(i * 960)
		pkt[4], pkt[5], pkt[6], pkt[7] = byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
		at := time.Duration(i) * period20
		if i == 50 {
			at += 45 * time.Millisecond
		}
		if err := s.Observe(pkt, at); err != nil {
			t.Fatal(err)
		}
	}
	sum := s.Summarize(100 * period20)
	if sum.LateFrames != 1 || sum.Gaps != 1 || sum.InterarrivalP50 != 21 || sum.LatenessMaxMs != 45 {
		t.Fatalf("summary %+v", sum)
	}
	if c := s.Counters(); c.Late != 1 || c.Gaps != 1 {
		t.Fatalf("counters %+v", c)
	}
	if v := New(Config{Kind: Video}, 0); v.Timing().Frames != 0 || v.timing != nil {
		t.Fatal("video stream has audio timing")
	}
}

func TestTimingAllocatesNothing(t *testing.T) {
	tm := NewTiming(48000, period20)
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		tm.Observe(uint32(i*960), time.Duration(i)*period20)
		i++
	}); n != 0 {
		t.Fatalf("%v allocations per period20", n)
	}
}
