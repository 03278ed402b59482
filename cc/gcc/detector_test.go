package gcc

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// 100 packets/s of 1200 bytes (0.96 Mbit/s). A ramp of 1 ms of extra delay per 10 ms packet is
// a sender 10 % above capacity.
var steady = delayTrace{interval: 10 * time.Millisecond, size: 1200, base: 40 * time.Millisecond, extra: flat}

func TestKalmanDetectsDelayRampAsOveruse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra func(int) time.Duration
		want  cc.Usage
	}{
		{"flat", flat, cc.Normal},
		{"positive ramp", ramp(time.Millisecond), cc.Overuse},
		{"negative ramp", ramp(-time.Millisecond), cc.Underuse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReceiver()
			tr := steady
			receiverReplay(r, tr, 0, 200, nil) // 2 s of flat delay to settle
			if u := r.State().Usage; u != cc.Normal {
				t.Fatalf("after a flat warm-up usage = %v, want normal", u)
			}
			tr.extra = func(i int) time.Duration { return tc.extra(i - 200) }
			seen := map[cc.Usage]bool{}
			receiverReplay(r, tr, 200, 300, func(int) bool { seen[r.State().Usage] = true; return true })
			if !seen[tc.want] {
				t.Errorf("usage verdicts seen %v, want %v among them", seen, tc.want)
			}
			if tc.want == cc.Normal && len(seen) != 1 {
				t.Errorf("a flat trace gave %v, want only normal", seen)
			}
		})
	}
}

func TestTrendlineDetectsDelayRampAsOveruse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra func(int) time.Duration
		want  cc.Usage
	}{
		{"flat", flat, cc.Normal},
		{"positive ramp", ramp(time.Millisecond), cc.Overuse},
		{"negative ramp", ramp(-time.Millisecond), cc.Underuse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSender(WithProbing(false))
			tr := steady
			tr.extra = flat
			feedbackReplay(s, tr, 0, 200, nil)
			if u := s.State().Usage; u != cc.Normal {
				t.Fatalf("after a flat warm-up usage = %v, want normal", u)
			}
			tr.extra = func(i int) time.Duration {
				if i < 200 {
					return 0
				}
				return tc.extra(i - 200)
			}
			seen := map[cc.Usage]bool{}
			feedbackReplay(s, tr, 200, 300, func(time.Duration) bool { seen[s.State().Usage] = true; return true })
			if !seen[tc.want] {
				t.Errorf("usage verdicts seen %v, want %v among them", seen, tc.want)
			}
			if tc.want == cc.Normal && len(seen) != 1 {
				t.Errorf("a flat trace gave %v, want only normal", seen)
			}
		})
	}
}

func TestOveruseNeedsSustainedSignal(t *testing.T) {
	// One late group is jitter, not over-use: the signal must stay above the threshold for
	// OveruseTime over at least two deltas and keep rising.
	r := NewReceiver()
	tr := steady
	tr.extra = func(i int) time.Duration {
		if i == 250 {
			return 8 * time.Millisecond
		}
		return 0
	}
	receiverReplay(r, tr, 0, 400, func(int) bool {
		if r.State().Usage == cc.Overuse {
			t.Fatal("a single delayed packet was taken for over-use")
		}
		return true
	})
}

func TestThresholdAdaptsTowardsTheSignal(t *testing.T) {
	d := newOveruseDetector(0.01, 0.00018, 10*time.Millisecond, 12.5)
	// |m| below γ: γ decays with k_d; above γ (within 15 ms): it grows with k_u.
	now := time.Duration(0)
	for i := 0; i < 100; i++ {
		now += 10 * time.Millisecond
		d.detect(0, 1, 10, 10, now)
	}
	if !(d.threshold < 12.5 && d.threshold >= minThreshold) {
		t.Errorf("threshold after a quiet second = %.3f, want below 12.5 and ≥ 6", d.threshold)
	}
	low := d.threshold
	for i := 0; i < 100; i++ {
		now += 10 * time.Millisecond
		d.detect(0, low+10, 10, 10, now)
	}
	if d.threshold <= low {
		t.Errorf("threshold under a large signal = %.3f, want above %.3f", d.threshold, low)
	}
	// Exact single step: γ += Δt·k·(|m| − γ).
	g := d.threshold
	now += 20 * time.Millisecond
	d.detect(0, g+5, 10, 10, now)
	if want := g + 20*0.01*5; !close(d.threshold, want, 1e-9) {
		t.Errorf("one k_u step: γ = %.6f, want %.6f", d.threshold, want)
	}
}

func close(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }
