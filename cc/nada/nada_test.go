package nada

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

func bottleneck(rate cc.Bitrate) cctest.Link {
	return cctest.Link{Rate: rate, Delay: 50 * time.Millisecond, Buffer: rate.BytesIn(300 * time.Millisecond)}
}

// receiverLoop runs nada.Receiver at the far end and feeds its reports to a Sender. Replaying the
// reported arrivals into the receiver when the feedback reaches the sender is equivalent to
// running it at the receiver and sending its report back over the same path.
type receiverLoop struct {
	*Sender
	rx   *Receiver
	next time.Duration
}

func newReceiverLoop(opts ...Option) *receiverLoop {
	return &receiverLoop{Sender: NewSender(opts...), rx: NewReceiver(opts...)}
}

func (l *receiverLoop) OnFeedback(fb cc.Feedback) {
	var last time.Duration
	for _, p := range fb.Packets {
		if !p.Lost {
			l.rx.OnPacket(cc.ReceivedPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Arrival: p.Arrival, Size: p.Size, CE: p.CE})
			last = p.Arrival
		}
	}
	if last >= l.next {
		l.next = last + l.rx.Interval()
		l.Sender.OnReport(fb.Now, l.rx.Report(last))
	}
}

func TestEquilibrium(t *testing.T) {
	// NADA's gradual update holds where x_curr = PRIO·XREF·RMAX/r. On a single bottleneck the
	// flow's rate settles at the capacity, so x_curr settles at XREF·RMAX/capacity: 15 ms on
	// 1 Mbit/s with the default RMAX of 1.5 Mbit/s, and 15 ms on 2 Mbit/s with RMAX 3 Mbit/s.
	for _, tc := range []struct {
		name     string
		capacity cc.Bitrate
		opts     []Option
		make     func(...Option) cc.RateController
	}{
		{"send-side/1M", cc.Mbps, nil, func(o ...Option) cc.RateController { return NewSender(o...) }},
		{"send-side/2M", 2 * cc.Mbps, []Option{WithRMax(3 * cc.Mbps)}, func(o ...Option) cc.RateController { return NewSender(o...) }},
		{"receiver/1M", cc.Mbps, nil, func(o ...Option) cc.RateController { return newReceiverLoop(o...) }},
		{"receiver/2M", 2 * cc.Mbps, []Option{WithRMax(3 * cc.Mbps)}, func(o ...Option) cc.RateController { return newReceiverLoop(o...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := cctest.RunRate(tc.make(tc.opts...), cctest.RateConfig{Link: bottleneck(tc.capacity), Duration: 60 * time.Second})
			cfg := newConfig(tc.opts)
			want := cfg.Prio * ms(cfg.XRef) * cfg.equilibriumRMax().Bps() / tc.capacity.Bps()
			from, to := 20*time.Second, 60*time.Second
			var x float64
			var n int
			for _, s := range tr.Samples {
				if s.At > from {
					x += s.State.SignalMs
					n++
				}
			}
			x /= float64(n)
			if math.Abs(x-want) > 0.1*want {
				t.Errorf("mean x_curr %.2f ms, want the equilibrium %.2f ms ± 10 %%\n%s", x, want, tr.String())
			}
			if rate := tr.MeanTarget(from, to); math.Abs(rate.Bps()/tc.capacity.Bps()-1) > 0.05 {
				t.Errorf("mean rate %v, want the capacity %v ± 5 %%", rate, tc.capacity)
			}
			if q := tr.MaxQueueDelay(from, to); q > 3*time.Duration(want*float64(time.Millisecond)) {
				t.Errorf("max queuing delay %v, want bounded near the %.1f ms equilibrium", q, want)
			}
		})
	}
}

func TestEquilibriumHelper(t *testing.T) {
	s := NewSender()
	if got := s.Equilibrium(cc.Mbps); got != 15*time.Millisecond {
		t.Errorf("Equilibrium(1 Mbit/s) = %v, want PRIO·XREF·RMAX/r = 15 ms", got)
	}
	if got := NewSender(WithPrio(2)).Equilibrium(4 * cc.Mbps); got != 7500*time.Microsecond {
		t.Errorf("Equilibrium with PRIO 2 at 4 Mbit/s = %v, want 7.5 ms", got)
	}
}

func TestAcceleratedRampUpIsBounded(t *testing.T) {
	// rmode 0: r_ref = max(r_ref, (1+γ)·r_recv), γ = min(GAMMA_MAX, QBOUND/(rtt+DELTA+DFILT)).
	s := NewSender()
	s.OnRTT(0, 100*time.Millisecond)
	s.OnReport(0, Report{RMode: 0, RRecv: 400 * cc.Kbps})
	gamma := math.Min(0.5, 50.0/(100+100+120))
	if want := cc.BitrateFromFloat((1 + gamma) * 400e3); s.ReferenceRate() != want {
		t.Errorf("r_ref = %v, want (1+%.4f)·400 kbit/s = %v", s.ReferenceRate(), gamma, want)
	}
	// With the defaults QBOUND/(rtt+DELTA+DFILT) < 50/220 never reaches GAMMA_MAX; with a larger
	// QBOUND and a short RTT the bound is GAMMA_MAX.
	s = NewSender(WithRampUp(10*time.Millisecond, 120*time.Millisecond, 0.5, 200*time.Millisecond))
	s.OnRTT(0, time.Millisecond)
	s.OnReport(0, Report{RMode: 0, RRecv: 400 * cc.Kbps})
	if want := cc.BitrateFromFloat(1.5 * 400e3); s.ReferenceRate() != want {
		t.Errorf("r_ref = %v, want GAMMA_MAX-bounded %v", s.ReferenceRate(), want)
	}
	// r_ref never drops in accelerated mode.
	s.OnReport(100*time.Millisecond, Report{RMode: 0, RRecv: 100 * cc.Kbps})
	if s.ReferenceRate() != cc.BitrateFromFloat(1.5*400e3) {
		t.Errorf("accelerated ramp-up lowered r_ref to %v", s.ReferenceRate())
	}
}

func TestGradualUpdate(t *testing.T) {
	start := 1 * cc.Mbps
	eq := NewSender().Equilibrium(start)
	for _, tc := range []struct {
		name string
		x    time.Duration
		dir  int
	}{
		{"at equilibrium", eq, 0},
		{"above equilibrium", eq + 10*time.Millisecond, -1},
		{"below equilibrium", eq - 10*time.Millisecond, +1},
	} {
		s := NewSender(WithInitialRate(start))
		s.OnReport(0, Report{RMode: 1, XCurr: tc.x})
		s.OnReport(100*time.Millisecond, Report{RMode: 1, XCurr: tc.x}) // x_diff = 0
		// eq. 5–7 with δ = 100 ms, x_diff = 0, applied twice from r = start.
		r := start.Bps()
		for i := 0; i < 2; i++ {
			off := ms(tc.x) - 10*1.5e6/r
			r -= 0.5 * (100.0 / 500) * (off / 500) * r
		}
		got := s.ReferenceRate()
		if got != cc.BitrateFromFloat(r) {
			t.Errorf("%s: r_ref = %v, want %v", tc.name, got, cc.BitrateFromFloat(r))
		}
		if dir := cmp(got, start); dir != tc.dir {
			t.Errorf("%s: r_ref moved %d, want %d", tc.name, dir, tc.dir)
		}
	}
	// A rising signal (x_diff > 0) cuts harder than a steady one, through the ETA term.
	steady, rising := NewSender(), NewSender()
	steady.OnReport(0, Report{RMode: 1, XCurr: 20 * time.Millisecond})
	rising.OnReport(0, Report{RMode: 1, XCurr: 10 * time.Millisecond})
	steady.OnReport(100*time.Millisecond, Report{RMode: 1, XCurr: 20 * time.Millisecond})
	rising.OnReport(100*time.Millisecond, Report{RMode: 1, XCurr: 20 * time.Millisecond})
	if rising.ReferenceRate() >= steady.ReferenceRate() {
		t.Errorf("rising signal r_ref %v, steady %v: want the rising one lower", rising.ReferenceRate(), steady.ReferenceRate())
	}
}

// Without an application maximum, r_ref follows the path above RFC 8698's default RMAX while the
// gradual update keeps that RMAX as its equilibrium reference: the same delay at the same rate.
func TestUnsetRMaxIsUncappedWithTheRFCEquilibrium(t *testing.T) {
	s := NewSender()
	s.OnReport(0, Report{RMode: 0, RRecv: 4 * cc.Mbps})
	if want := cc.BitrateFromFloat(4e6 * 1.5); s.ReferenceRate() < 4*cc.Mbps || s.ReferenceRate() > want {
		t.Errorf("r_ref = %v, want (4, %v] Mbit/s", s.ReferenceRate(), want)
	}
	capped := NewSender(WithRMax(RefRMax))
	for _, r := range []cc.Bitrate{500 * cc.Kbps, cc.Mbps, 1500 * cc.Kbps} {
		if a, b := s.Equilibrium(r), capped.Equilibrium(r); a != b {
			t.Errorf("equilibrium at %v: %v unset, %v with RMAX = 1.5 Mbit/s", r, a, b)
		}
	}
	if got := s.Equilibrium(cc.Mbps); got != 15*time.Millisecond {
		t.Errorf("equilibrium at 1 Mbit/s = %v, want PRIO·XREF·1.5/1 = 15ms", got)
	}
	if s.PacingRate() != s.ReferenceRate() {
		t.Errorf("pacing %v, want r_ref %v", s.PacingRate(), s.ReferenceRate())
	}
}

func cmp(a, b cc.Bitrate) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

func TestRatesClippedAndBufferCompensation(t *testing.T) {
	s := NewSender(WithRMax(1500 * cc.Kbps))
	s.OnReport(0, Report{RMode: 0, RRecv: 10 * cc.Mbps})
	if s.ReferenceRate() != 1500*cc.Kbps {
		t.Errorf("r_ref = %v, want clipped at RMAX", s.ReferenceRate())
	}
	s.OnReport(100*time.Millisecond, Report{RMode: 1, XCurr: 500 * time.Millisecond})
	s.OnReport(600*time.Millisecond, Report{RMode: 1, XCurr: 500 * time.Millisecond})
	if s.ReferenceRate() != 150*cc.Kbps {
		t.Errorf("r_ref = %v, want clipped at RMIN", s.ReferenceRate())
	}
	// RFC 8698 §5.2.2: r_vin = r_ref − BETA_V·8·L·FPS, r_send = r_ref + BETA_S·8·L·FPS.
	s = NewSender(WithInitialRate(cc.Mbps))
	s.SetShapingBuffer(1000)
	if want := cc.Mbps - 24*cc.Kbps; s.TargetRate() != want {
		t.Errorf("r_vin = %v, want %v", s.TargetRate(), want)
	}
	if want := cc.Mbps + 24*cc.Kbps; s.PacingRate() != want {
		t.Errorf("r_send = %v, want %v", s.PacingRate(), want)
	}
}

func TestSameInputsGiveIdenticalOutputs(t *testing.T) {
	for name, make := range map[string]func() cc.RateController{
		"send-side": func() cc.RateController { return NewSender() },
		"receiver":  func() cc.RateController { return newReceiverLoop() },
	} {
		cfg := cctest.RateConfig{Link: bottleneck(cc.Mbps), Duration: 20 * time.Second}
		a, b := cctest.RunRate(make(), cfg), cctest.RunRate(make(), cfg)
		if len(a.Samples) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs of the same trace differ", name)
		}
	}
}

func TestReceiverClockOffsetDoesNotMatter(t *testing.T) {
	cfg := cctest.RateConfig{Link: bottleneck(cc.Mbps), Duration: 20 * time.Second}
	base := cctest.RunRate(NewSender(), cfg)
	for _, off := range []time.Duration{time.Hour, -37 * time.Minute} {
		shifted := cctest.RunRate(cctest.ShiftArrivals(NewSender(), off), cfg)
		if !reflect.DeepEqual(base.Targets(), shifted.Targets()) {
			t.Errorf("arrival clock offset %v changed the target series", off)
		}
	}
}

// earlyFeedback delivers every other feedback report 1 ms early, as a receiver's timer and the
// network do: feedback every DELTA give or take a little.
type earlyFeedback struct {
	cc.RateController
	n int
}

func (e *earlyFeedback) OnFeedback(fb cc.Feedback) {
	if e.n++; e.n%2 == 0 {
		fb.Now -= time.Millisecond
	}
	e.RateController.OnFeedback(fb)
}

func TestFeedbackJitterDoesNotSlowTheRampUp(t *testing.T) {
	// Feedback every DELTA, every other report 1 ms early: each report must still update the
	// rate, so the accelerated ramp-up climbs as fast as with exact intervals.
	cfg := cctest.RateConfig{Link: bottleneck(20 * cc.Mbps), Duration: 8 * time.Second, FeedbackInterval: 100 * time.Millisecond}
	opts := []Option{WithRMax(20 * cc.Mbps)}
	exact := cctest.RunRate(NewSender(opts...), cfg)
	jittered := cctest.RunRate(&earlyFeedback{RateController: NewSender(opts...)}, cfg)
	from, to := 7*time.Second, 8*time.Second
	e, j := exact.MeanTarget(from, to), jittered.MeanTarget(from, to)
	if j.Bps() < 0.9*e.Bps() {
		t.Errorf("after 7 s the jittered feedback reached %v, exact feedback %v: early reports were skipped", j, e)
	}
}
