package tcp

import (
	"math"
	"time"
)

// cubicState is RFC 9438's congestion-avoidance state, in segments and seconds.
type cubicState struct {
	wMax      float64 // window before the last reduction
	cwndPrior float64
	k         float64
	epoch     time.Duration
	inEpoch   bool
	wEst      float64 // Reno-friendly estimate
	hadLoss   bool
}

// cubicReduce records a congestion event (RFC 9438 §4.6–4.7) and returns the new ssthresh.
func (c *Controller) cubicReduce(flight float64) float64 {
	s := &c.cubic
	w := c.cwnd / c.mss
	if c.cfg.FastConvergence && s.hadLoss && w < s.wMax {
		s.wMax = w * (1 + c.cfg.CubicBeta) / 2 // release bandwidth to newer flows
	} else {
		s.wMax = w
	}
	s.cwndPrior = w
	s.hadLoss = true
	s.inEpoch = false
	return math.Max(flight*c.cfg.CubicBeta, 2*c.mss)
}

// W is W_cubic(t) = C·(t − K)³ + W_max, in segments, t in seconds since the epoch began.
func (s *cubicState) W(c float64, t float64) float64 {
	d := t - s.k
	return c*d*d*d + s.wMax
}

// cubicAvoid is RFC 9438 §4.2–4.4: grow towards W_cubic(t + RTT), bounded to [cwnd, 1.5·cwnd],
// unless the Reno-friendly estimate W_est is larger.
func (c *Controller) cubicAvoid(acked float64) {
	s := &c.cubic
	w := c.cwnd / c.mss
	if !s.inEpoch {
		s.inEpoch, s.epoch = true, c.now
		if !s.hadLoss || s.wMax < w {
			s.wMax = w // no loss yet (left slow start at ssthresh): start on the plateau
		}
		s.k = math.Cbrt((s.wMax - w) / c.cfg.CubicC)
		s.wEst = w
		if s.cwndPrior == 0 {
			s.cwndPrior = w
		}
	}
	t := (c.now - s.epoch).Seconds()
	rtt := c.rtt.SRTT().Seconds()
	target := s.W(c.cfg.CubicC, t+rtt)
	target = math.Max(w, math.Min(target, 1.5*w))

	segments := acked / c.mss
	alpha := 3 * (1 - c.cfg.CubicBeta) / (1 + c.cfg.CubicBeta)
	if s.wEst >= s.cwndPrior {
		alpha = 1 // RFC 9438 §4.3: once W_est passes the pre-loss window, grow like Reno
	}
	s.wEst += alpha * segments / w

	if s.W(c.cfg.CubicC, t) < s.wEst {
		w = s.wEst // Reno-friendly region
	} else {
		w += (target - w) / w * segments
	}
	c.cwnd = w * c.mss
}
