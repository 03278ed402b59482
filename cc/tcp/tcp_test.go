package tcp

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

const mss = 1460

// inAvoidance returns a model in congestion avoidance with a window of w segments.
func inAvoidance(v Variant, w int) *Controller {
	return New(v, WithInitialWindow(w), WithInitialSsthresh(w*mss))
}

// threeDupacks delivers three duplicate acks and reports whether the third asked to retransmit.
func threeDupacks(c *Controller, now time.Duration, flight int) bool {
	var rt bool
	for i := 0; i < 3; i++ {
		rt = c.OnAck(cc.Ack{Now: now, InFlight: flight})
	}
	return rt
}

func TestMultiplicativeDecreaseOnLoss(t *testing.T) {
	for _, tc := range []struct {
		v    Variant
		beta float64
	}{{Reno, 0.5}, {NewReno, 0.5}, {Cubic, 0.7}} {
		const w = 40
		c := inAvoidance(tc.v, w)
		c.OnAck(cc.Ack{Now: 0, Acked: mss, InFlight: w * mss, RTT: 100 * time.Millisecond})
		flight := c.Cwnd()
		if !threeDupacks(c, 10*time.Millisecond, flight) {
			t.Errorf("%v: no fast retransmit on the third duplicate ack", tc.v)
		}
		ssthresh := math.Floor(tc.beta * float64(flight))
		if got := c.Cwnd(); math.Abs(float64(got)-(ssthresh+3*mss)) > 1 {
			t.Errorf("%v: cwnd in recovery %d, want ssthresh + 3·MSS = %.0f", tc.v, got, ssthresh+3*mss)
		}
		c.OnAck(cc.Ack{Now: 20 * time.Millisecond, InFlight: flight}) // a 4th duplicate inflates
		if got := c.Cwnd(); math.Abs(float64(got)-(ssthresh+4*mss)) > 1 {
			t.Errorf("%v: cwnd after a 4th duplicate %d, want %.0f", tc.v, got, ssthresh+4*mss)
		}
		c.OnAck(cc.Ack{Now: 110 * time.Millisecond, Acked: flight, InFlight: flight + mss})
		if c.InRecovery() {
			t.Errorf("%v: still in recovery after a full ack", tc.v)
		}
		if got := c.Cwnd(); math.Abs(float64(got)-ssthresh) > 1 {
			t.Errorf("%v: cwnd after recovery %d, want %.2f × %d = %.0f", tc.v, got, tc.beta, flight, ssthresh)
		}
	}
}

func TestNewRenoPartialAcks(t *testing.T) {
	for _, v := range []Variant{Reno, NewReno} {
		c := inAvoidance(v, 20)
		flight := 20 * mss
		threeDupacks(c, 0, flight)
		// Two segments were lost: the first retransmission brings a partial ack for 5 segments.
		rt := c.OnAck(cc.Ack{Now: 100 * time.Millisecond, Acked: 5 * mss, InFlight: flight})
		switch v {
		case Reno:
			if rt || c.InRecovery() || c.Cwnd() != 10*mss {
				t.Errorf("Reno: retransmit=%v recovery=%v cwnd=%d; want Reno to leave recovery with cwnd = ssthresh", rt, c.InRecovery(), c.Cwnd())
			}
		case NewReno:
			// RFC 6582: retransmit, deflate by the amount acked, add back one MSS.
			if !rt || !c.InRecovery() || c.Cwnd() != (10+3-5+1)*mss {
				t.Errorf("NewReno: retransmit=%v recovery=%v cwnd=%d; want true, true, %d", rt, c.InRecovery(), c.Cwnd(), 9*mss)
			}
			// The ack covering the recovery point ends it.
			rt = c.OnAck(cc.Ack{Now: 200 * time.Millisecond, Acked: 15 * mss, InFlight: 15 * mss})
			if rt || c.InRecovery() || c.Cwnd() != 10*mss {
				t.Errorf("NewReno full ack: retransmit=%v recovery=%v cwnd=%d; want false, false, %d", rt, c.InRecovery(), c.Cwnd(), 10*mss)
			}
		}
	}
}

// rounds acks a full window every rtt for n rounds and calls f after each.
func rounds(c *Controller, start, rtt time.Duration, n int, f func(now time.Duration)) time.Duration {
	now := start
	for r := 0; r < n; r++ {
		segs := c.Cwnd() / mss
		for i := 0; i < segs; i++ {
			c.OnAck(cc.Ack{Now: now + time.Duration(i)*rtt/time.Duration(segs), Acked: mss, InFlight: c.Cwnd(), RTT: rtt})
		}
		now += rtt
		if f != nil {
			f(now)
		}
	}
	return now
}

func TestSlowStartDoublesAndRenoAddsOneSegmentPerRTT(t *testing.T) {
	c := New(Reno, WithInitialWindow(2))
	prev := c.Cwnd()
	now := rounds(c, 0, 100*time.Millisecond, 5, func(time.Duration) {
		if c.Cwnd() != 2*prev {
			t.Errorf("slow start: cwnd %d after a round from %d, want doubled", c.Cwnd(), prev)
		}
		prev = c.Cwnd()
	})
	c = inAvoidance(Reno, 30)
	prev = c.Cwnd()
	rounds(c, now, 100*time.Millisecond, 5, func(time.Duration) {
		if d := c.Cwnd() - prev; d < mss*9/10 || d > mss*11/10 {
			t.Errorf("congestion avoidance: +%d bytes per round, want ≈ 1 MSS", d)
		}
		prev = c.Cwnd()
	})
}

func TestCubicFollowsTheCubicCurve(t *testing.T) {
	// After a loss at W_max = 100 segments the window restarts at β·W_max = 70 and follows
	// W(t) = C·(t − K)³ + W_max with K = ∛(W_max·(1−β)/C) ≈ 4.22 s, flattening at W_max and then
	// probing beyond it.
	const wmax = 100
	const rtt = 100 * time.Millisecond
	c := inAvoidance(Cubic, wmax)
	threeDupacks(c, 0, wmax*mss)
	c.OnAck(cc.Ack{Now: rtt, Acked: wmax * mss, InFlight: wmax * mss, RTT: rtt})
	if c.Cwnd() != 70*mss {
		t.Fatalf("cwnd after the loss %d segments, want 70", c.Cwnd()/mss)
	}
	k := math.Cbrt(wmax * (1 - 0.7) / 0.4)
	start := rtt
	worst := 0.0
	rounds(c, start, rtt, 80, func(now time.Duration) {
		t0 := (now - start).Seconds() // the epoch began with the first ack of the first round
		want := 0.4*math.Pow(t0-k, 3) + wmax
		got := float64(c.Cwnd()) / mss
		worst = math.Max(worst, math.Abs(got-want)/want)
		if math.Abs(got-want) > 0.03*want+1 {
			t.Errorf("t=%.1fs: cwnd %.1f segments, want W(t) = %.1f", t0, got, want)
		}
	})
	t.Logf("largest deviation from W(t): %.1f %%", 100*worst)
}

func TestCubicFastConvergence(t *testing.T) {
	// A second loss below the previous W_max releases bandwidth: W_max = cwnd·(1+β)/2.
	c := inAvoidance(Cubic, 100)
	threeDupacks(c, 0, 100*mss)
	c.OnAck(cc.Ack{Now: 100 * time.Millisecond, Acked: 100 * mss, InFlight: 100 * mss, RTT: 100 * time.Millisecond})
	rounds(c, 100*time.Millisecond, 100*time.Millisecond, 5, nil)
	w := c.cwnd / mss
	threeDupacks(c, time.Second, c.Cwnd())
	if want := w * 1.7 / 2; math.Abs(c.cubic.wMax-want) > 1e-9 {
		t.Errorf("W_max after a loss at %.1f < 100: %.2f, want %.2f", w, c.cubic.wMax, want)
	}
}

func TestTimeoutAndBackoff(t *testing.T) {
	c := inAvoidance(NewReno, 20)
	c.OnAck(cc.Ack{Now: 0, Acked: mss, InFlight: 20 * mss, RTT: 200 * time.Millisecond})
	rto := c.RTO()
	if want := max(time.Second, 200*time.Millisecond+4*100*time.Millisecond); rto != want {
		t.Errorf("RTO after one 200 ms sample = %v, want %v (RFC 6298)", rto, want)
	}
	c.OnTimeout(2*time.Second, 20*mss)
	if c.Cwnd() != mss || c.Ssthresh() != 10*mss || c.RTO() != 2*rto {
		t.Errorf("after a timeout cwnd %d ssthresh %d RTO %v; want 1 MSS, 10 MSS, %v", c.Cwnd(), c.Ssthresh(), c.RTO(), 2*rto)
	}
	c.OnTimeout(4*time.Second, mss)
	if c.RTO() != 4*rto {
		t.Errorf("second timeout RTO %v, want %v", c.RTO(), 4*rto)
	}
	c.OnAck(cc.Ack{Now: 5 * time.Second, Acked: mss, InFlight: mss, RTT: 200 * time.Millisecond})
	if c.RTO() != rto {
		t.Errorf("a new RTT sample should clear the backoff: RTO %v, want %v", c.RTO(), rto)
	}
}

func TestECNEchoReducesOncePerRTT(t *testing.T) {
	c := inAvoidance(Reno, 40)
	c.OnAck(cc.Ack{Now: 0, Acked: mss, InFlight: 40 * mss, RTT: 100 * time.Millisecond})
	w := c.Cwnd()
	c.OnAck(cc.Ack{Now: 10 * time.Millisecond, Acked: mss, InFlight: w, CE: true})
	after := c.Cwnd()
	if after > w/2+mss {
		t.Errorf("CE echo: cwnd %d → %d, want about halved", w, after)
	}
	c.OnAck(cc.Ack{Now: 20 * time.Millisecond, Acked: mss, InFlight: after, CE: true})
	if c.Cwnd() < after {
		t.Errorf("a second CE echo within the RTT reduced again: %d → %d", after, c.Cwnd())
	}
}

func TestClosedLoopConvergence(t *testing.T) {
	for _, v := range []Variant{Reno, NewReno, Cubic} {
		for _, capacity := range []cc.Bitrate{cc.Mbps, 2 * cc.Mbps} {
			t.Run(v.String()+"/"+capacity.String(), func(t *testing.T) {
				buffer := 100 * time.Millisecond // one bandwidth-delay product of queue
				link := cctest.Link{Rate: capacity, Delay: 50 * time.Millisecond, Buffer: capacity.BytesIn(buffer)}
				tr := cctest.RunWindow(New(v), cctest.WindowConfig{Link: link, Duration: 60 * time.Second})
				from, to := 10*time.Second, 60*time.Second
				if share := tr.MeanDelivered(from, to).Bps() / capacity.Bps(); share < 0.85 || share > 1.01 {
					t.Errorf("delivered %.2f × capacity, want ≥ 0.85\n%s", share, tr.String())
				}
				// Loss-based TCP fills the buffer, but the queue never exceeds it.
				if q := tr.MaxQueueDelay(from, to); q > buffer+20*time.Millisecond {
					t.Errorf("max queuing delay %v with a %v buffer", q, buffer)
				}
				if tr.Dropped == 0 {
					t.Error("no loss in 60 s: a loss-based controller should probe until the buffer overflows")
				}
			})
		}
	}
}

func TestSameInputsGiveIdenticalOutputs(t *testing.T) {
	for _, v := range []Variant{Reno, NewReno, Cubic} {
		link := cctest.Link{Rate: cc.Mbps, Delay: 50 * time.Millisecond, Buffer: cc.Mbps.BytesIn(100 * time.Millisecond)}
		cfg := cctest.WindowConfig{Link: link, Duration: 20 * time.Second}
		a, b := cctest.RunWindow(New(v), cfg), cctest.RunWindow(New(v), cfg)
		if len(a.Samples) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("%v: two runs of the same trace differ", v)
		}
	}
}
