package gcc

import "math"

// kalman is the draft's scalar Kalman filter on the inter-group delay variation
// (draft-ietf-rmcat-gcc-02 §5.3), in milliseconds:
//
//	z = d − m;  var_v = max(α·var_v + (1−α)·min(z², 9·var_v), 1)
//	k = (e+q) / (var_v + e + q);  m += k·z;  e = (1−k)(e+q)
//	α = (1−χ)^(30 / (1000·f_max)),  f_max = 1 / (shortest send delta of the last 60 groups, ms)
//
// Unlike pion's implementation, f_max is in groups per millisecond, so the exponent is of order
// one at 30 groups/s and the noise variance really adapts. z is clamped to 3·√var_v in the
// variance update only, as the draft says, so that one outlier does not inflate the noise.
type kalman struct {
	q, chi  float64
	m, e, v float64
	deltas  [kalmanHistory]float64
	n, next int
}

const kalmanHistory = 60

func newKalman(q, e0, chi float64) kalman { return kalman{q: q, chi: chi, e: e0, v: 1} }

// update folds in one delay variation d (ms) with its group send delta (ms) and returns m.
func (k *kalman) update(d, sendDeltaMs float64) float64 {
	if sendDeltaMs > 0 {
		k.deltas[k.next] = sendDeltaMs
		k.next = (k.next + 1) % kalmanHistory
		k.n = min(k.n+1, kalmanHistory)
	}
	minDelta := 1000.0 / 30
	for i := 0; i < k.n; i++ {
		minDelta = min(minDelta, k.deltas[i])
	}
	alpha := math.Pow(1-k.chi, 30*minDelta/1000)

	z := d - k.m
	zc := math.Max(-3*math.Sqrt(k.v), math.Min(z, 3*math.Sqrt(k.v)))
	k.v = math.Max(alpha*k.v+(1-alpha)*zc*zc, 1)
	gain := (k.e + k.q) / (k.v + k.e + k.q)
	k.m += gain * z
	k.e = (1 - gain) * (k.e + k.q)
	return k.m
}
