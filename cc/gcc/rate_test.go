package gcc

import (
	"math"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

func TestDraftOveruseCutsToBetaTimesReceivedRate(t *testing.T) {
	// Replay a trace into the draft receiver: flat, then 10 % over capacity. At the first
	// over-use the estimate must become β·R̂, R̂ being the receiver's 500 ms received rate.
	r := NewReceiver(WithInitialRate(2 * cc.Mbps))
	tr := steady
	receiverReplay(r, tr, 0, 300, nil)
	tr.extra = func(i int) time.Duration { return time.Duration(max(i-300, 0)) * time.Millisecond }
	cut := false
	receiverReplay(r, tr, 300, 600, func(i int) bool {
		if r.State().Usage != cc.Overuse {
			return true
		}
		received := r.engine.receivedRate()
		want := cc.BitrateFromFloat(0.85 * received)
		if got := r.Estimate(); got != want {
			t.Errorf("estimate after over-use = %v, want 0.85 × R̂ = 0.85 × %v = %v", got, cc.BitrateFromFloat(received), want)
		}
		if got := r.State().Phase; got != "hold" {
			t.Errorf("phase after the decrease = %q, want hold", got)
		}
		cut = true
		return false
	})
	if !cut {
		t.Fatal("no over-use detected on a 10 % overload")
	}
}

func TestSendSideOveruseCutsToBetaTimesAckedRate(t *testing.T) {
	s := NewSender(WithProbing(false), WithInitialRate(2*cc.Mbps))
	tr := steady
	feedbackReplay(s, tr, 0, 300, nil)
	before := s.delay.rate
	tr.extra = func(i int) time.Duration { return time.Duration(max(i-300, 0)) * time.Millisecond }
	cut := false
	feedbackReplay(s, tr, 0, 600, func(time.Duration) bool {
		if s.delay.rate >= before || s.State().Usage != cc.Overuse {
			before = s.delay.rate
			return true
		}
		// libwebrtc: 0.85 × acknowledged rate − 5 kbit/s.
		want := 0.85*s.acked.bps() - 5000
		if got := s.delay.rate; math.Abs(got-want) > 1e-6 {
			t.Errorf("delay-based estimate after over-use = %.0f, want 0.85 × %.0f − 5000 = %.0f", got, s.acked.bps(), want)
		}
		if s.TargetRate() > cc.BitrateFromFloat(s.delay.rate) {
			t.Errorf("target %v above the delay-based estimate %.0f", s.TargetRate(), s.delay.rate)
		}
		cut = true
		return false
	})
	if !cut {
		t.Fatal("no decrease on a 10 % overload")
	}
}

func TestAIMDIncreaseRules(t *testing.T) {
	cfg := newConfig(nil)
	t.Run("multiplicative 1.08 per second", func(t *testing.T) {
		a := newAIMD(&cfg, true)
		a.update(0, cc.Normal, 0)
		start := a.rate
		a.update(time.Second, cc.Normal, 0)
		if want := start * 1.08; math.Abs(a.rate-want) > 1e-6 {
			t.Errorf("after 1 s of normal: %.2f, want %.2f", a.rate, want)
		}
		a.update(3*time.Second, cc.Normal, 0) // Δt is capped at 1 s
		if want := start * 1.08 * 1.08; math.Abs(a.rate-want) > 1e-6 {
			t.Errorf("after a 2 s gap: %.2f, want one more 1.08 step = %.2f", a.rate, want)
		}
	})
	t.Run("cap at 1.5 × received", func(t *testing.T) {
		a := newAIMD(&cfg, true)
		a.rate = 1e6
		a.update(0, cc.Normal, 400e3)
		if want := 1.5 * 400e3; a.rate != want {
			t.Errorf("draft cap: %.0f, want %.0f", a.rate, want)
		}
		b := newAIMD(&cfg, false)
		b.rate = 1e6
		b.update(0, cc.Normal, 400e3)
		b.update(time.Second, cc.Normal, 400e3)
		if b.rate != 1e6 {
			t.Errorf("libwebrtc variant above its limit must not increase nor be cut: %.0f", b.rate)
		}
	})
	t.Run("additive near convergence", func(t *testing.T) {
		a := newAIMD(&cfg, false)
		a.rate = 1e6
		a.setRTT(100 * time.Millisecond)
		a.update(0, cc.Overuse, 1e6) // records the capacity estimate
		a.update(time.Millisecond, cc.Normal, 0.9e6)
		r0 := a.rate
		a.update(time.Second+time.Millisecond, cc.Normal, 0.9e6)
		// 30 fps of 1200-byte packets: (bits/frame / packets/frame) / (2·(RTT+100 ms)) per second.
		frame := r0 / 30
		perSecond := frame / math.Ceil(frame/9600) / (2 * 0.2)
		if got := a.rate - r0; math.Abs(got-perSecond) > 1e-6 {
			t.Errorf("additive step over 1 s = %.1f bit/s, want %.1f", got, perSecond)
		}
	})
}

func TestDraftLossController(t *testing.T) {
	for _, tc := range []struct {
		loss float64
		want func(r float64) float64
	}{
		{0.20, func(r float64) float64 { return r * (1 - 0.5*0.20) }},
		{0.50, func(r float64) float64 { return r * (1 - 0.5*0.50) }},
		{0.05, func(r float64) float64 { return r }},
		{0.10, func(r float64) float64 { return r }},
		{0.01, func(r float64) float64 { return r * 1.05 }},
		{0.00, func(r float64) float64 { return r * 1.05 }},
	} {
		// Trace replay through DraftSender: one second of feedback with the given share of packets
		// lost, flat delay. The delay-based limit stays well above the loss-based rate.
		s := NewDraftSender(WithInitialRate(500 * cc.Kbps))
		s.OnTick(0)              // starts the report interval
		s.engine.rate.rate = 5e6 // a delay-based limit far above: only the loss rule acts
		before := s.TargetRate().Bps()
		const n = 100
		lost := int(math.Round(tc.loss * n))
		var pkts []cc.PacketResult
		for i := 1; i <= n; i++ {
			send := time.Duration(i) * 10 * time.Millisecond
			pkts = append(pkts, cc.PacketResult{SeqNo: int64(i), SendTime: send, Arrival: send + 40*time.Millisecond, Size: 1200, Lost: i <= lost})
		}
		s.OnFeedback(cc.Feedback{Now: time.Second + 50*time.Millisecond, Packets: pkts})
		want := cc.BitrateFromFloat(tc.want(before))
		if got := s.TargetRate(); got != want {
			t.Errorf("loss %.0f %%: rate %v → %v, want %v", tc.loss*100, cc.BitrateFromFloat(before), got, want)
		}
	}
}

func TestDraftSenderNeverExceedsREMB(t *testing.T) {
	s := NewDraftSender(WithInitialRate(1 * cc.Mbps))
	s.OnREMB(0, 600*cc.Kbps)
	if got := s.TargetRate(); got > 600*cc.Kbps {
		t.Errorf("target %v above the REMB value 600 kbit/s", got)
	}
	for i := 1; i <= 10; i++ {
		s.OnLossReport(time.Duration(i)*time.Second, 0, 100)
	}
	if got := s.TargetRate(); got != 600*cc.Kbps {
		t.Errorf("after ten loss-free reports target = %v, want pinned at the REMB value", got)
	}
}

func TestSendSideLossController(t *testing.T) {
	cfg := newConfig(nil)
	l := newLossV1(&cfg)
	l.rate = 1e6
	l.firstReport, l.hasFirstReport = -10*time.Second, true // past the start phase
	l.report(0, 30, 100, 0)
	cut := 1e6 * (1 - 0.5*0.3)
	if l.rate != cut {
		t.Errorf("30 %% loss: %.0f, want %.0f", l.rate, cut)
	}
	// Further reports within the loss interval (1 s) form no new fraction: no further cut, although
	// 300 ms + RTT have passed, and the short-window loss still shows what happens.
	for at := 100 * time.Millisecond; at < time.Second; at += 100 * time.Millisecond {
		l.report(at, 30, 100, 0)
	}
	if l.rate != cut {
		t.Errorf("reports within the loss interval: %.0f, want unchanged %.0f", l.rate, cut)
	}
	if l.recent != 0.3 {
		t.Errorf("short-window loss %.2f, want 0.30", l.recent)
	}
	// A second later the accumulated loss forms the next fraction: one more cut.
	l.report(time.Second, 30, 100, 0)
	if want := cut * (1 - 0.5*0.3); l.rate != want {
		t.Errorf("after 1 s: %.0f, want %.0f", l.rate, want)
	}
	// Loss-free reports: growth bounded by 8 % per second over the minimum of the last second.
	r := l.rate
	for i := 1; i <= 80; i++ {
		l.report(time.Second+time.Duration(i)*25*time.Millisecond, 0, 100, 0)
	}
	if l.rate > r*1.08*1.08+2000+1e-6 || l.rate <= r {
		t.Errorf("two seconds of clean reports: %.0f → %.0f, want growth within 8 %% per second + 1 kbit/s", r, l.rate)
	}
}
