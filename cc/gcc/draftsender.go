package gcc

import (
	"math"
	"slices"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// DraftSender runs the draft's algorithm at the sender: the delay-based pipeline of Receiver, fed
// from transport feedback instead of at the receiver, and the draft's loss-based controller
// (§6). The target is A_s, the loss-based rate, never above A_r = min(delay-based estimate,
// latest REMB). It can also run as the classic draft sender without transport feedback: then
// OnLossReport (RTCP receiver reports) and OnREMB drive it. It implements cc.RateController.
type DraftSender struct {
	cfg     Config
	engine  draftDelay
	loss    draftLoss
	remb    float64
	hasREMB bool
	delayed bool // the delay pipeline has produced an estimate
	now     time.Duration
	scratch []cc.PacketResult
}

// NewDraftSender returns a sender running draft-ietf-rmcat-gcc-02.
func NewDraftSender(opts ...Option) *DraftSender {
	s := &DraftSender{cfg: newConfig(opts)}
	s.engine = newDraftDelay(&s.cfg)
	s.loss = newDraftLoss(&s.cfg)
	return s
}

// OnPacketSent is unused by the draft algorithm.
func (s *DraftSender) OnPacketSent(cc.SentPacket) {}

// OnFeedback processes one transport feedback message.
func (s *DraftSender) OnFeedback(fb cc.Feedback) {
	s.advance(fb.Now)
	received := sortReceived(&s.scratch, fb.Packets)
	for i := range received {
		p := &received[i]
		s.engine.onPacket(p.SendTime, p.Arrival, p.Size)
	}
	s.loss.add(len(fb.Packets)-len(received), len(fb.Packets))
	if len(received) > 0 {
		s.engine.update(s.now)
		s.delayed = true
	}
	s.loss.maybeUpdate(s.now)
	s.applyCap()
}

// OnLossReport feeds the loss controller from an RTCP receiver report: lost and expected packets
// since the previous report.
func (s *DraftSender) OnLossReport(now time.Duration, lost, expected int) {
	s.advance(now)
	if expected > 0 {
		s.loss.add(min(max(lost, 0), expected), expected)
	}
	s.loss.maybeUpdate(s.now)
	s.applyCap()
}

// OnREMB records the receiver's estimate A_r.
func (s *DraftSender) OnREMB(now time.Duration, rate cc.Bitrate) {
	s.advance(now)
	s.remb, s.hasREMB = rate.Bps(), true
	s.applyCap()
}

// OnRTT gives an RTT sample.
func (s *DraftSender) OnRTT(now, rtt time.Duration) {
	s.advance(now)
	s.engine.rate.setRTT(rtt)
}

// OnTick advances time; the draft has no timers beyond the loss interval.
func (s *DraftSender) OnTick(now time.Duration) {
	s.advance(now)
	s.loss.maybeUpdate(s.now)
	s.applyCap()
}

func (s *DraftSender) advance(now time.Duration) { s.now = max(s.now, now) }

// receiverLimit is A_r: the smaller of the local delay-based estimate and the last REMB.
func (s *DraftSender) receiverLimit() float64 {
	limit := math.Inf(1)
	if s.delayed {
		limit = s.engine.rate.rate
	}
	if s.hasREMB {
		limit = math.Min(limit, s.remb)
	}
	return limit
}

func (s *DraftSender) applyCap() {
	s.loss.rate = math.Max(s.cfg.MinRate.Bps(), math.Min(s.loss.rate, math.Min(s.receiverLimit(), s.cfg.MaxRate.Bps())))
}

// TargetRate is A_s.
func (s *DraftSender) TargetRate() cc.Bitrate { return cc.BitrateFromFloat(s.loss.rate) }

// PacingRate is PacingFactor × the target.
func (s *DraftSender) PacingRate() cc.Bitrate {
	return cc.BitrateFromFloat(s.loss.rate * s.cfg.PacingFactor)
}

// State is a snapshot for display.
func (s *DraftSender) State() cc.State {
	st := cc.State{Algorithm: "gcc-draft", Target: s.TargetRate(), Pacing: s.PacingRate()}
	s.engine.fillState(&st)
	st.LossBased = st.Target
	st.LossRate = s.loss.fraction
	return st
}

// sortReceived copies the received packets of a feedback into scratch (reused across calls, so no
// allocation in steady state) and sorts them by arrival time, send time breaking ties; lost
// packets are left out. Sorting a copy leaves the caller's slice untouched.
func sortReceived(scratch *[]cc.PacketResult, packets []cc.PacketResult) []cc.PacketResult {
	out := (*scratch)[:0]
	for i := range packets {
		if !packets[i].Lost {
			out = append(out, packets[i])
		}
	}
	*scratch = out
	slices.SortStableFunc(out, func(a, b cc.PacketResult) int {
		switch {
		case a.Arrival != b.Arrival:
			return cmpDuration(a.Arrival, b.Arrival)
		default:
			return cmpDuration(a.SendTime, b.SendTime)
		}
	})
	return out
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
