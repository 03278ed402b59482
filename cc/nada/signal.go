package nada

import (
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/stats"
)

// Report is what the NADA receiver sends every DELTA (RFC 8698 §5.1.3).
type Report struct {
	// RMode is 0 when accelerated ramp-up is allowed (no loss and every queuing-delay sample below
	// QEPS within LOGWIN), 1 otherwise.
	RMode int
	// XCurr is the aggregate congestion signal x_curr.
	XCurr time.Duration
	// RRecv is the receiving rate over LOGWIN.
	RRecv cc.Bitrate
	// QueueDelay is the filtered queuing delay d_queue (for display).
	QueueDelay time.Duration
	// LossRate and MarkRate are the smoothed p_loss and p_mark (for display).
	LossRate, MarkRate float64
}

// signal computes NADA's aggregate congestion signal (RFC 8698 §5.1) from per-packet
// observations. Times are in the receiver's clock.
type signal struct {
	cfg *Config

	base      stats.MinHistory
	filter    stats.MinFilter
	queue     time.Duration // filtered d_queue
	received  stats.RateMeter
	counted   stats.RateMeter // packets received in LOGWIN
	lostCount stats.RateMeter // packets lost in LOGWIN
	marked    stats.RateMeter // packets CE-marked in LOGWIN
	intervals lossIntervals
	pLoss     float64
	pMark     float64
	x         float64 // ms
	lastLoss  time.Duration
	lastHighQ time.Duration
	hasLoss   bool
	hasHighQ  bool
	now       time.Duration
	started   bool
	nextSeq   int64
	seqSeen   bool
}

const meterBuckets = 25

func newSignal(cfg *Config) signal {
	return signal{
		cfg:       cfg,
		base:      stats.NewMinHistory(cfg.BaseBuckets, cfg.BaseBucket),
		filter:    stats.NewMinFilter(cfg.FilterTaps),
		received:  stats.NewRateMeter(cfg.LogWin, meterBuckets),
		counted:   stats.NewRateMeter(cfg.LogWin, meterBuckets),
		lostCount: stats.NewRateMeter(cfg.LogWin, meterBuckets),
		marked:    stats.NewRateMeter(cfg.LogWin, meterBuckets),
	}
}

func (s *signal) advance(t time.Duration) {
	if !s.started || t > s.now {
		s.now, s.started = t, true
	}
}

// onReceived records one received packet: one-way delay sample, rate and marks.
func (s *signal) onReceived(send, arrival time.Duration, size int, ce bool) {
	s.advance(arrival)
	fwd := arrival - send
	s.base.Add(arrival, fwd)
	raw := max(0, fwd-s.base.Min())
	s.filter.Add(raw)
	s.queue = s.filter.Min()
	if raw >= s.cfg.QEps {
		s.lastHighQ, s.hasHighQ = arrival, true
	}
	s.received.Add(arrival, size)
	s.counted.Add(arrival, 1)
	if ce {
		s.marked.Add(arrival, 1)
	}
	s.intervals.received()
}

// onLost records n lost packets detected at time t.
func (s *signal) onLost(t time.Duration, n int) {
	if n <= 0 {
		return
	}
	s.advance(t)
	s.lostCount.Add(t, n)
	s.lastLoss, s.hasLoss = t, true
	s.intervals.lost()
}

// onSequence infers losses from sequence gaps (receiver side): a jump past the expected number
// counts the missing packets as lost; a late packet is just received.
func (s *signal) onSequence(seq int64, arrival time.Duration) {
	const maxGap = 1 << 16 // a larger jump is a sequence reset, not a loss burst
	switch {
	case !s.seqSeen:
		s.nextSeq, s.seqSeen = seq+1, true
	case seq >= s.nextSeq:
		if gap := seq - s.nextSeq; gap > 0 && gap < maxGap {
			s.onLost(arrival, int(gap))
		}
		s.nextSeq = seq + 1
	}
}

// report forms the periodic feedback at now (receiver clock), updating the smoothed ratios.
func (s *signal) report(now time.Duration) Report {
	s.advance(now)
	now = s.now
	got, lost, marks := s.counted.Sum(now), s.lostCount.Sum(now), s.marked.Sum(now)
	if total := got + lost; total > 0 {
		s.pLoss += s.cfg.Alpha * (float64(lost)/float64(total) - s.pLoss)
	} else {
		s.pLoss -= s.cfg.Alpha * s.pLoss
	}
	if got > 0 {
		s.pMark += s.cfg.Alpha * (float64(marks)/float64(got) - s.pMark)
	} else {
		s.pMark -= s.cfg.Alpha * s.pMark
	}
	s.x = s.aggregate()
	rate, _ := s.received.Rate(now)
	return Report{
		RMode:      s.rampMode(now),
		XCurr:      time.Duration(s.x * float64(time.Millisecond)),
		RRecv:      cc.BitrateFromFloat(rate),
		QueueDelay: s.queue,
		LossRate:   s.pLoss,
		MarkRate:   s.pMark,
	}
}

// aggregate is x_curr = d̃ + DMARK·(p_mark/PMRREF)² + DLOSS·(p_loss/PLRREF)², in ms, clipped to
// XMax (RFC 8698 eq. 1–2).
func (s *signal) aggregate() float64 {
	d := ms(s.queue)
	x := s.warpBlend(d)
	m, l := s.pMark/s.cfg.PMRRef, s.pLoss/s.cfg.PLRRef
	x += ms(s.cfg.DMark)*m*m + ms(s.cfg.DLoss)*l*l
	if !(x >= 0) { // NaN or negative
		x = 0
	}
	return math.Min(x, ms(s.cfg.XMax))
}

// warpBlend applies the non-linear warping while the last loss is within MULTILOSS average loss
// intervals, blends back to d over one more interval (ns3-rmcat), and returns d otherwise.
func (s *signal) warpBlend(d float64) float64 {
	avg, ok := s.intervals.average()
	if !ok || avg <= 0 {
		return d
	}
	cur := s.intervals.current()
	warped := s.warp(d)
	switch {
	case cur < s.cfg.MultiLoss*avg:
		return warped
	case cur < (s.cfg.MultiLoss+1)*avg:
		a := (cur - s.cfg.MultiLoss*avg) / avg
		return a*d + (1-a)*warped
	}
	return d
}

// warp is d̃ = d below QTH, QTH·exp(−LAMBDA·(d − QTH)/QTH) above (RFC 8698 eq. 1).
func (s *signal) warp(d float64) float64 {
	qth := ms(s.cfg.QTh)
	if d < qth {
		return d
	}
	return qth * math.Exp(-s.cfg.Lambda*(d-qth)/qth)
}

func (s *signal) rampMode(now time.Duration) int {
	if (s.hasLoss && now-s.lastLoss <= s.cfg.LogWin) || (s.hasHighQ && now-s.lastHighQ <= s.cfg.LogWin) {
		return 1
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
