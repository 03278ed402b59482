package ledbat

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

const mss = 1460

// ackWith feeds one ack of one segment whose one-way delay is base + queue and whose flight is
// generous (so ALLOWED_INCREASE does not bind).
func ackWith(c *Controller, now, owd time.Duration) {
	c.OnAck(cc.Ack{Now: now, Acked: mss, InFlight: c.Cwnd() + 10*mss, RTT: 2 * owd, OneWayDelay: owd})
}

func TestWindowFollowsQueuingDelayAroundTarget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		queue time.Duration
		grow  bool
	}{
		{"below target grows", 20 * time.Millisecond, true},
		{"above target shrinks", 150 * time.Millisecond, false},
	} {
		c := New(WithInitCwnd(20))
		now := time.Duration(0)
		ackWith(c, now, 50*time.Millisecond) // base delay sample
		for i := 0; i < 4; i++ {             // fill the current-delay filter
			now += time.Millisecond
			ackWith(c, now, 50*time.Millisecond+tc.queue)
		}
		before := float64(c.Cwnd())
		now += time.Millisecond
		c.cwnd = before
		ackWith(c, now, 50*time.Millisecond+tc.queue)
		// RFC 6817: cwnd += GAIN·(TARGET − qd)/TARGET·bytes_acked·MSS/cwnd.
		off := (100 - float64(tc.queue/time.Millisecond)) / 100
		want := before + off*mss*mss/before
		if math.Abs(c.cwnd-want) > 1e-9 {
			t.Errorf("%s: cwnd %.3f → %.3f, want %.3f", tc.name, before, c.cwnd, want)
		}
		if (c.cwnd > before) != tc.grow {
			t.Errorf("%s: cwnd went from %.0f to %.0f", tc.name, before, c.cwnd)
		}
	}
}

func TestWindowBounds(t *testing.T) {
	c := New()
	// Far above target for a long time: the window stops at MIN_CWND.
	for i := 0; i < 1000; i++ {
		ackWith(c, time.Duration(i)*time.Millisecond, 50*time.Millisecond+time.Duration(min(i, 1))*400*time.Millisecond)
	}
	if c.Cwnd() != 2*mss {
		t.Errorf("cwnd %d after a long overload, want MIN_CWND = %d", c.Cwnd(), 2*mss)
	}
	// ALLOWED_INCREASE: an application-limited flight keeps cwnd ≤ flight + 1 MSS.
	c = New(WithInitCwnd(10))
	for i := 0; i < 100; i++ {
		c.OnAck(cc.Ack{Now: time.Duration(i) * time.Millisecond, Acked: mss, InFlight: 3 * mss, OneWayDelay: 50 * time.Millisecond})
	}
	if c.Cwnd() > 4*mss {
		t.Errorf("cwnd %d with a flight of 3 MSS, want ≤ flight + ALLOWED_INCREASE·MSS = %d", c.Cwnd(), 4*mss)
	}
}

func TestLossHalvesOncePerRTTAndTimeoutResets(t *testing.T) {
	c := New(WithInitCwnd(40))
	c.OnAck(cc.Ack{Now: 0, Acked: mss, InFlight: 50 * mss, RTT: 100 * time.Millisecond, OneWayDelay: 50 * time.Millisecond})
	w := c.Cwnd()
	retransmit := false
	for i := 0; i < 3; i++ {
		retransmit = c.OnAck(cc.Ack{Now: 10 * time.Millisecond, InFlight: 50 * mss})
	}
	if !retransmit || c.Cwnd() != w/2 {
		t.Errorf("third duplicate ack: retransmit=%v cwnd %d, want true and %d", retransmit, c.Cwnd(), w/2)
	}
	c.OnLoss(50*time.Millisecond, 50*mss) // same RTT: no second halving
	if c.Cwnd() != w/2 {
		t.Errorf("second loss within an RTT halved again: %d", c.Cwnd())
	}
	c.OnLoss(200*time.Millisecond, 50*mss)
	if c.Cwnd() != w/4 {
		t.Errorf("loss one RTT later: cwnd %d, want %d", c.Cwnd(), w/4)
	}
	rto := c.RTO()
	c.OnTimeout(time.Second, 50*mss)
	if c.Cwnd() != mss || c.RTO() != 2*rto {
		t.Errorf("timeout: cwnd %d RTO %v, want 1 MSS and %v", c.Cwnd(), c.RTO(), 2*rto)
	}
}

func TestBaseDelayHistoryForgetsAfterTenMinutes(t *testing.T) {
	c := New()
	ackWith(c, 0, 20*time.Millisecond)
	for m := 1; m <= 11; m++ {
		ackWith(c, time.Duration(m)*time.Minute, 70*time.Millisecond)
		for i := 0; i < 4; i++ {
			ackWith(c, time.Duration(m)*time.Minute+time.Duration(i+1)*time.Millisecond, 70*time.Millisecond)
		}
		switch {
		case m < 10 && c.QueueDelay() != 50*time.Millisecond:
			t.Errorf("minute %d: queuing delay %v, want 50 ms against the 20 ms base", m, c.QueueDelay())
		case m >= 10 && c.QueueDelay() != 0:
			t.Errorf("minute %d: queuing delay %v, want 0 once the old base left the 10 buckets", m, c.QueueDelay())
		}
	}
}

func TestPlusPlusGain(t *testing.T) {
	for _, tc := range []struct {
		base time.Duration
		want float64
	}{
		{10 * time.Millisecond, 1.0 / 12}, // ⌈2·60/10⌉ = 12
		{3 * time.Millisecond, 1.0 / 16},  // capped at 16
		{200 * time.Millisecond, 1},       // ⌈0.6⌉ = 1
	} {
		c := New(WithPlusPlus())
		c.OnAck(cc.Ack{Now: 0, Acked: mss, RTT: tc.base})
		if g := c.gain(); math.Abs(g-tc.want) > 1e-12 {
			t.Errorf("base %v: GAIN %.4f, want %.4f", tc.base, g, tc.want)
		}
	}
}

func TestPlusPlusSlowStartExitAndMultiplicativeDecrease(t *testing.T) {
	c := New(WithPlusPlus(), WithSlowdowns(false, 2, 9))
	base := 40 * time.Millisecond
	now := time.Duration(0)
	ack := func(queue time.Duration) {
		now += time.Millisecond
		c.OnAck(cc.Ack{Now: now, Acked: mss, InFlight: c.Cwnd() + 10*mss, RTT: base + queue})
	}
	ack(0) // the base RTT
	for i := 0; i < 10; i++ {
		ack(10 * time.Millisecond) // ¾·60 = 45 ms not reached: slow start
	}
	if c.pp.phase != phaseSlowStart {
		t.Fatalf("phase %v with 10 ms of queue, want slow start", c.pp.phase)
	}
	for i := 0; i < 4; i++ {
		ack(50 * time.Millisecond) // the 4-sample filter needs four samples above 45 ms
	}
	if c.pp.phase != phaseAvoidance {
		t.Fatalf("phase %v with 50 ms of queue, want congestion avoidance", c.pp.phase)
	}
	// At twice the target, per RTT W += max(GAIN − W·(2−1), −W/2) = −W/2: one window of acks
	// should roughly halve the window (applied per ack, so a little less than exactly half).
	c.cwnd = 40 * mss
	w := c.cwnd
	for acked := 0.0; acked < w; acked += mss {
		ack(120 * time.Millisecond)
	}
	if r := c.cwnd / w; r < 0.5 || r > 0.65 {
		t.Errorf("one RTT at 2×TARGET: cwnd ratio %.3f, want ≈ 0.5–0.65", r)
	}
}

func bottleneck(rate cc.Bitrate) cctest.Link {
	return cctest.Link{Rate: rate, Delay: 50 * time.Millisecond, Buffer: rate.BytesIn(300 * time.Millisecond)}
}

func TestClosedLoopConvergence(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []Option
		target     time.Duration
		minShare   float64
		queueSlack time.Duration
	}{
		{"rfc6817", nil, 100 * time.Millisecond, 0.95, 30 * time.Millisecond},
		{"ledbat++", []Option{WithPlusPlus()}, 60 * time.Millisecond, 0.8, 30 * time.Millisecond},
	} {
		for _, capacity := range []cc.Bitrate{cc.Mbps, 2 * cc.Mbps} {
			t.Run(tc.name+"/"+capacity.String(), func(t *testing.T) {
				tr := cctest.RunWindow(New(tc.opts...), cctest.WindowConfig{Link: bottleneck(capacity), Duration: 60 * time.Second})
				from, to := 15*time.Second, 60*time.Second
				if share := tr.MeanDelivered(from, to).Bps() / capacity.Bps(); share < tc.minShare || share > 1.01 {
					t.Errorf("delivered %.2f × capacity, want ≥ %.2f\n%s", share, tc.minShare, tr.String())
				}
				// The queue settles around TARGET, not at the 300 ms buffer.
				if q := tr.MeanQueueDelay(from, to); q > tc.target+tc.queueSlack || q < tc.target/2 {
					t.Errorf("mean queuing delay %v, want near the %v target", q, tc.target)
				}
				if q := tr.MaxQueueDelay(from, to); q > tc.target+2*tc.queueSlack {
					t.Errorf("max queuing delay %v, want bounded near the %v target", q, tc.target)
				}
				if tr.Dropped != 0 {
					t.Errorf("%d drops with a 300 ms buffer", tr.Dropped)
				}
			})
		}
	}
}

func TestPlusPlusSlowsDownPeriodically(t *testing.T) {
	tr := cctest.RunWindow(New(WithPlusPlus()), cctest.WindowConfig{Link: bottleneck(cc.Mbps), Duration: 60 * time.Second})
	// Each slowdown (window frozen, then the slow start back) is followed by 9× its length of
	// normal operation: slowdowns start every ~10 slowdown lengths and take ~10 % of the time.
	type slowdown struct{ start, end time.Duration }
	var sds []slowdown
	prev := ""
	for _, s := range tr.Samples {
		ph := s.State.Phase
		if ph == "slowdown" && prev != "slowdown" {
			sds = append(sds, slowdown{start: s.At})
		}
		if ph == "congestion-avoidance" && prev != "congestion-avoidance" && len(sds) > 0 && sds[len(sds)-1].end == 0 {
			sds[len(sds)-1].end = s.At
		}
		prev = ph
	}
	if len(sds) < 3 {
		t.Fatalf("%d slowdowns in 60 s, want several\n%s", len(sds), tr.String())
	}
	const sample = 100 * time.Millisecond
	for i := 1; i < len(sds); i++ {
		d := sds[i-1].end - sds[i-1].start
		if d <= 0 || d > 3*time.Second {
			t.Fatalf("slowdown %d lasted %v, want a few RTTs", i-1, d)
		}
		gap := sds[i].start - sds[i-1].start
		if want := 10 * d; gap < want-10*sample || gap > want+10*sample {
			t.Errorf("slowdown %d lasted %v and the next began %v later, want ≈ 10 × %v", i-1, d, gap, d)
		}
	}
}

func TestSameInputsGiveIdenticalOutputs(t *testing.T) {
	for _, opts := range [][]Option{nil, {WithPlusPlus()}} {
		cfg := cctest.WindowConfig{Link: bottleneck(cc.Mbps), Duration: 20 * time.Second}
		a, b := cctest.RunWindow(New(opts...), cfg), cctest.RunWindow(New(opts...), cfg)
		if len(a.Samples) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("options %d: two runs of the same trace differ", len(opts))
		}
	}
}
