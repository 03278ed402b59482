package encadapt

import (
	"math"
	"time"
)

// The quality scaler's constants (quality_scaler.cc and the QualityScalingExperiment defaults).
const (
	qpLowVP8         = 29
	qpHighVP8        = 95
	alphaHigh        = 0.9995 // per millisecond, the filter the high-QP test reads
	alphaLow         = 0.9999 // per millisecond, the filter the low-QP test reads
	samplingPeriod   = 2 * time.Second
	samplePeriodMult = 2.5 // the period's factor after the first step down
	minFrames        = 60  // frames (encoded or dropped) a check needs
	dropWindow       = 150 // frames the drop rate averages over
	dropPercentHigh  = 60
)

// checkResult is what a quality check concludes.
type checkResult int

const (
	qpFewSamples checkResult = iota
	qpNormal
	qpHigh
	qpLow
)

// qualityScaler is libwebrtc's QualityScaler for VP8 with the experiment's defaults: it collects
// each frame's QP and drop, and at its check times says whether to adapt.
type qualityScaler struct {
	next       time.Duration // the next check
	fastRampup bool          // no step down yet: check every samplingPeriod
	enoughSeen bool          // the last check had enough frames
	drops      movingAverage // 100 per dropped frame, 0 per encoded one
	high, low  qpSmoother
	lastReason string // why the last check said qpHigh
	lastQP     int    // the smoothed QP the last adapting check read
}

func newQualityScaler(start time.Duration) qualityScaler {
	return qualityScaler{next: start + samplingPeriod, fastRampup: true, drops: newMovingAverage(dropWindow),
		high: qpSmoother{alpha: alphaHigh, empty: true}, low: qpSmoother{alpha: alphaLow, empty: true}}
}

// due says whether a check is due at now.
func (q *qualityScaler) due(now time.Duration) bool { return now >= q.next }

// check runs the check due at q.next and schedules the next one.
func (q *qualityScaler) check(now time.Duration) checkResult {
	r := q.evaluate()
	switch r {
	case qpHigh:
		q.fastRampup = false
		q.clear()
	case qpLow:
		q.clear()
	}
	q.enoughSeen = r != qpFewSamples
	q.next += q.period()
	return r
}

// period is the delay to the next check (CheckQpTask::GetCheckingQpDelayMs).
func (q *qualityScaler) period() time.Duration {
	switch {
	case q.fastRampup:
		return samplingPeriod
	case !q.enoughSeen:
		return samplingPeriod / 2
	}
	return time.Duration(float64(samplingPeriod) * samplePeriodMult)
}

func (q *qualityScaler) evaluate() checkResult {
	if q.drops.size() < minFrames {
		return qpFewSamples
	}
	if q.drops.average() >= dropPercentHigh {
		q.lastReason, q.lastQP = "frame drops", q.high.average()
		return qpHigh
	}
	if q.high.empty || q.low.empty {
		return qpNormal
	}
	q.lastQP = q.high.average()
	if q.lastQP > qpHighVP8 {
		q.lastReason = "high QP"
		return qpHigh
	}
	if q.lastQP = q.low.average(); q.lastQP <= qpLowVP8 {
		return qpLow
	}
	return qpNormal
}

func (q *qualityScaler) clear() {
	q.drops.reset()
	q.high.reset()
	q.low.reset()
}

// encoded records a frame encoded at now with quantiser qp.
func (q *qualityScaler) encoded(now time.Duration, qp int) {
	q.drops.add(0)
	if qp >= 0 {
		q.high.add(now, float64(qp))
		q.low.add(now, float64(qp))
	}
}

// dropped records a frame the encoder dropped (every reason counts, as the experiment says).
func (q *qualityScaler) dropped() { q.drops.add(100) }

// qpSmoother is an exponential filter of QP over time (rtc::ExpFilter applied with the elapsed
// milliseconds as exponent): the first sample after a reset is taken as is.
type qpSmoother struct {
	alpha  float64
	value  float64
	empty  bool
	lastMs int64 // survives resets, as libwebrtc's does
}

func (s *qpSmoother) add(now time.Duration, qp float64) {
	ms := now.Milliseconds()
	if s.empty {
		s.value, s.empty = qp, false
	} else {
		a := math.Pow(s.alpha, float64(ms-s.lastMs))
		s.value = a*s.value + (1-a)*qp
	}
	s.lastMs = ms
}

func (s *qpSmoother) reset() { s.empty = true }

// average is the smoothed QP truncated to an integer, as libwebrtc reads it.
func (s *qpSmoother) average() int { return int(s.value) }

// movingAverage is the integer mean of the last n samples (rtc::MovingAverage).
type movingAverage struct {
	hist  []int
	count int
	sum   int
}

func newMovingAverage(n int) movingAverage { return movingAverage{hist: make([]int, n)} }

func (m *movingAverage) add(v int) {
	i := m.count % len(m.hist)
	if m.count >= len(m.hist) {
		m.sum -= m.hist[i]
	}
	m.hist[i] = v
	m.sum += v
	m.count++
}

func (m *movingAverage) size() int { return min(m.count, len(m.hist)) }

// average is the mean rounded down; 0 when empty.
func (m *movingAverage) average() int {
	if m.size() == 0 {
		return 0
	}
	return m.sum / m.size()
}

func (m *movingAverage) reset() { m.count, m.sum = 0, 0 }
