package nada

// lossIntervals keeps TFRC-style loss intervals (RFC 5348 §5.4), in packets, to decide whether
// losses are "recent": RFC 8698 §5.1.2 warps the queuing delay while the last loss happened within
// MULTILOSS × the average loss interval. The average weights the last eight intervals
// 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 and, as TFRC, takes the larger of the averages with and
// without the open interval.
type lossIntervals struct {
	intervals [lossHistory + 1]int // [0] is the open interval: packets since the last loss
	n         int                  // closed intervals held
	seen      bool                 // any loss yet
}

const lossHistory = 8

var lossWeights = [lossHistory]float64{1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2}

func (l *lossIntervals) received() { l.intervals[0]++ }

// lost closes the open interval (a loss event starts a new one).
func (l *lossIntervals) lost() {
	copy(l.intervals[1:], l.intervals[:lossHistory])
	l.intervals[0] = 0
	l.n = min(l.n+1, lossHistory)
	l.seen = true
}

// current is the open interval in packets.
func (l *lossIntervals) current() float64 { return float64(l.intervals[0]) }

// average is the weighted average interval; ok is false before the first loss.
func (l *lossIntervals) average() (float64, bool) {
	if !l.seen || l.n == 0 {
		return 0, false
	}
	var with, without, weights float64
	for i := 0; i < l.n; i++ {
		w := lossWeights[i]
		with += w * float64(l.intervals[i])
		without += w * float64(l.intervals[i+1])
		weights += w
	}
	return max(with, without) / weights, true
}
