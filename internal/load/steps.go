package load

import (
	"context"
	"time"

	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
	"github.com/strata-rtc/strata/internal/load/sampler"
)

// stepper holds the load after every step of joins and measures each step's window. A nil
// stepper (a plan without steps) does nothing.
type stepper struct {
	r     *run
	total int
	steps []report.Step
	stop  int // the step after which the run stopped (from 1), or 0
}

func newStepper(r *run) *stepper {
	if r.plan.Steps.Size <= 0 {
		return nil
	}
	return &stepper{r: r, total: r.plan.Participants()}
}

// due reports whether joins ends a step.
func (s *stepper) due(joins int) bool {
	return s != nil && (joins%s.r.plan.Steps.Size == 0 || joins == s.total)
}

func (s *stepper) stopped() bool { return s != nil && s.stop > 0 }

// hold holds the load for the step's hold and measures its window. It returns false when the run
// should stop: interrupted, or behind real time with StopWhenBehind.
func (s *stepper) hold(ctx context.Context) bool {
	cfg := s.r.plan.Steps
	if !sleep(ctx, cfg.Settle) {
		return false
	}
	a := s.r.snapshot()
	if !sleep(ctx, cfg.Hold-cfg.Settle) {
		return false
	}
	b := s.r.snapshot()
	st := stepBetween(a, b)
	lateOK := st.Audio.Frames == 0 || st.Audio.LateShare <= cfg.MaxLate
	st.Behind = !lateOK || st.LossRatio > cfg.MaxLoss
	s.steps = append(s.steps, st)
	if st.Behind && cfg.StopWhenBehind {
		s.stop = len(s.steps)
		return false
	}
	return true
}

// report adds the steps to the result.
func (s *stepper) report(res *report.Result) {
	if s == nil {
		return
	}
	res.Steps, res.StoppedBehind = s.steps, s.stop
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// snapshot is the run's running totals at one moment.
type snapshot struct {
	at        time.Duration
	srv, self sampler.Reading
	c         totals
	timing    rtpstats.TimingCounts
	load      float64
}

func (r *run) snapshot() snapshot {
	return snapshot{at: time.Since(r.start), srv: r.sampler.server.Read(), self: r.sampler.self.Read(),
		c: r.counters(), timing: r.timing(), load: report.LoadAverage()}
}

// stepBetween measures the window between two snapshots.
func stepBetween(a, b snapshot) report.Step {
	dt := (b.at - a.at).Seconds()
	mbps := func(x, y uint64) float64 {
		if dt <= 0 || y < x {
			return 0
		}
		return float64(y-x) * 8 / dt / 1e6
	}
	st := report.Step{Participants: b.c.pubs + b.c.pureSubs + b.c.parts + b.c.calls, PeerConnections: b.c.pcs(),
		From: a.at.Seconds(), To: b.at.Seconds(), SentMbps: mbps(a.c.sent, b.c.sent), RecvMbps: mbps(a.c.recv, b.c.recv),
		GenCPUPct: sampler.CPUPercent(a.self, b.self, b.at-a.at), LoadAvg: b.load}
	if a.srv.OK && b.srv.OK {
		st.ServerOK = true
		st.ServerCPUPct = sampler.CPUPercent(a.srv, b.srv, b.at-a.at)
		st.MixerCPUPct = sampler.MixerCPUPercent(a.srv, b.srv, b.at-a.at)
		st.ServerRSSBytes = b.srv.Stat.RSSBytes
		if b.srv.NetIsolated {
			st.NetInMbps, st.NetOutMbps = mbps(a.srv.Net.RxBytes, b.srv.Net.RxBytes), mbps(a.srv.Net.TxBytes, b.srv.Net.TxBytes)
		}
	}
	if b.c.expected > a.c.expected {
		st.Expected = b.c.expected - a.c.expected
		if b.c.lost > a.c.lost {
			st.Lost = b.c.lost - a.c.lost
		}
		st.LossRatio = float64(st.Lost) / float64(st.Expected)
	}
	if b.c.echoSent > a.c.echoSent && b.c.echoMatched >= a.c.echoMatched {
		st.EchoShare = float64(b.c.echoMatched-a.c.echoMatched) / float64(b.c.echoSent-a.c.echoSent)
	}
	w := b.timing.Since(&a.timing)
	st.Audio = report.TimingOf(&w)
	return st
}
