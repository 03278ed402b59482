package nada

import (
	"math"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// feed sends n packets, one per 10 ms from packet index start, with the one-way delay given per
// index; lost(i) drops packet i (a sequence gap); ce(i) marks it.
func feed(r *Receiver, start, n int, delay func(int) time.Duration, lost, ce func(int) bool) time.Duration {
	var last time.Duration
	for i := start; i < start+n; i++ {
		if lost != nil && lost(i) {
			continue
		}
		send := time.Duration(i) * 10 * time.Millisecond
		last = send + delay(i)
		r.OnPacket(cc.ReceivedPacket{SeqNo: int64(i), SendTime: send, Arrival: last, Size: 1200, CE: ce != nil && ce(i)})
	}
	return last
}

func constant(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

func TestQueuingDelayIsForwardDelayMinusBase(t *testing.T) {
	r := NewReceiver()
	feed(r, 0, 100, constant(30*time.Millisecond), nil, nil)
	at := feed(r, 100, 100, constant(55*time.Millisecond), nil, nil)
	rep := r.Report(at)
	if rep.QueueDelay != 25*time.Millisecond || rep.XCurr != 25*time.Millisecond {
		t.Errorf("d_queue %v, x_curr %v; want 25 ms each (55 ms − 30 ms base, no loss)", rep.QueueDelay, rep.XCurr)
	}
	if rep.RMode != 1 {
		t.Error("queuing delay above QEPS yet rmode 0")
	}
}

func TestMinFilterRejectsSpikes(t *testing.T) {
	// 15-tap minimum: a burst of 14 delayed packets does not move d_queue; a 15th does.
	r := NewReceiver()
	feed(r, 0, 100, constant(30*time.Millisecond), nil, nil)
	spike := func(n int) func(int) time.Duration {
		return func(i int) time.Duration {
			if i >= 100 && i < 100+n {
				return 130 * time.Millisecond
			}
			return 30 * time.Millisecond
		}
	}
	at := feed(r, 100, 14, spike(14), nil, nil)
	if q := r.Report(at).QueueDelay; q != 0 {
		t.Errorf("after 14 delayed packets d_queue = %v, want 0", q)
	}
	at = feed(r, 114, 1, spike(15), nil, nil)
	if q := r.Report(at).QueueDelay; q != 100*time.Millisecond {
		t.Errorf("after 15 delayed packets d_queue = %v, want 100 ms", q)
	}
}

func TestRampModeNeedsNoLossAndLowDelay(t *testing.T) {
	r := NewReceiver()
	at := feed(r, 0, 100, constant(30*time.Millisecond), nil, nil)
	if m := r.Report(at).RMode; m != 0 {
		t.Errorf("clean path: rmode %d, want 0", m)
	}
	at = feed(r, 100, 10, constant(30*time.Millisecond), func(i int) bool { return i == 105 }, nil)
	if m := r.Report(at).RMode; m != 1 {
		t.Errorf("loss within LOGWIN: rmode %d, want 1", m)
	}
	at = feed(r, 110, 100, constant(30*time.Millisecond), nil, nil) // one second later
	if m := r.Report(at).RMode; m != 0 {
		t.Errorf("loss older than LOGWIN: rmode %d, want 0", m)
	}
}

func TestLossWarpsDelayAndAddsPenalty(t *testing.T) {
	// A 300 ms standing queue (a TCP-filled buffer) with a loss every 50 packets: the queuing
	// delay is warped to QTH·exp(−LAMBDA·(300−50)/50) ≈ 4.1 ms and the loss penalty
	// DLOSS·(p_loss/PLRREF)² is added on top (RFC 8698 eq. 1–2).
	r := NewReceiver()
	feed(r, 0, 100, constant(20*time.Millisecond), nil, nil)
	lossy := func(i int) bool { return i%50 == 0 }
	var rep Report
	for k := 1; k <= 40; k++ {
		at := feed(r, 100*k, 100, constant(320*time.Millisecond), lossy, nil)
		rep = r.Report(at)
	}
	warped := 50 * math.Exp(-0.5*(300.0-50)/50)
	penalty := 10 * math.Pow(rep.LossRate/0.01, 2)
	if got := ms(rep.XCurr); math.Abs(got-(warped+penalty)) > 0.01 {
		t.Errorf("x_curr %.3f ms, want warped %.3f + loss penalty %.3f", got, warped, penalty)
	}
	if math.Abs(rep.LossRate-0.02) > 0.002 {
		t.Errorf("p_loss %.4f, want ≈ 0.02", rep.LossRate)
	}
	// Without losses the same queue is not warped.
	clean := NewReceiver()
	feed(clean, 0, 100, constant(20*time.Millisecond), nil, nil)
	at := feed(clean, 100, 100, constant(120*time.Millisecond), nil, nil)
	if got := clean.Report(at).XCurr; got != 100*time.Millisecond {
		t.Errorf("loss-free 100 ms queue: x_curr %v, want 100 ms unwarped", got)
	}
}

func TestECNMarkPenalty(t *testing.T) {
	// 1 % of packets CE-marked, no queue: x_curr → DMARK·(p_mark/PMRREF)² ≈ 2 ms.
	r := NewReceiver()
	var rep Report
	// Reports every DELTA (10 packets); each LOGWIN holds 50 packets, 0 or 1 of them marked, so
	// the smoothed ratio hovers around 1 %.
	for k := 0; k < 600; k++ {
		at := feed(r, 10*k, 10, constant(20*time.Millisecond), nil, func(i int) bool { return i%100 == 7 })
		rep = r.Report(at)
	}
	want := 2 * math.Pow(rep.MarkRate/0.01, 2)
	if got := ms(rep.XCurr); math.Abs(got-want) > 1e-6 || math.Abs(rep.MarkRate-0.01) > 0.005 {
		t.Errorf("x_curr %.3f ms with p_mark %.4f, want DMARK·(p/PMRREF)² = %.3f at p ≈ 0.01", got, rep.MarkRate, want)
	}
}

func TestBaseDelayTracksLongTermMinimum(t *testing.T) {
	// The base delay is the minimum over ten one-minute buckets: a path whose delay rises for
	// good is re-based once the old minimum ages out.
	r := NewReceiver()
	r.OnPacket(cc.ReceivedPacket{SeqNo: 0, SendTime: 0, Arrival: 20 * time.Millisecond, Size: 1200})
	var rep Report
	for i := 1; i <= 12*60; i++ { // 12 minutes, one packet a second at 80 ms
		send := time.Duration(i) * time.Second
		r.OnPacket(cc.ReceivedPacket{SeqNo: int64(i), SendTime: send, Arrival: send + 80*time.Millisecond, Size: 1200})
		rep = r.Report(send + 80*time.Millisecond)
		if i == 5*60 && rep.QueueDelay != 60*time.Millisecond {
			t.Errorf("after 5 min d_queue %v, want 60 ms above the old base", rep.QueueDelay)
		}
	}
	if rep.QueueDelay != 0 {
		t.Errorf("after 12 min d_queue %v, want 0: the base should have moved to 80 ms", rep.QueueDelay)
	}
}
