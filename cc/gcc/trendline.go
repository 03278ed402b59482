package gcc

import "time"

// trendline is libwebrtc's send-side delay estimator: the accumulated inter-group delay variation
// is smoothed (smoothed = s·smoothed + (1−s)·acc) and an ordinary least-squares line is fitted to
// the last window (arrival time, smoothed delay) points. Its slope estimates
// (send rate − capacity)/capacity: positive while queues fill, negative while they drain.
type trendline struct {
	window    int
	smoothing float64

	deltas      int // number of deltas seen, capped
	first       time.Duration
	hasFirst    bool
	acc, smooth float64
	xs, ys      [maxTrendlineWindow]float64
	count, next int
	trend       float64
}

const (
	maxTrendlineWindow = 64
	maxDeltaCount      = 1000
)

func newTrendline(window int, smoothing float64) trendline {
	return trendline{window: window, smoothing: smoothing}
}

// update folds in one group delta and returns the current slope.
func (t *trendline) update(d groupDelta) float64 {
	deltaMs := msOf(d.arrivalDelta - d.sendDelta)
	t.deltas = min(t.deltas+1, maxDeltaCount)
	if !t.hasFirst {
		t.first, t.hasFirst = d.arrival, true
	}
	t.acc += deltaMs
	t.smooth = t.smoothing*t.smooth + (1-t.smoothing)*t.acc
	t.xs[t.next] = msOf(d.arrival - t.first)
	t.ys[t.next] = t.smooth
	t.next = (t.next + 1) % t.window
	t.count = min(t.count+1, t.window)
	if t.count == t.window {
		if slope, ok := t.fit(); ok {
			t.trend = slope
		}
	}
	return t.trend
}

// fit returns the least-squares slope of the held points; ok is false when every x is equal.
func (t *trendline) fit() (float64, bool) {
	var sx, sy float64
	for i := 0; i < t.count; i++ {
		sx += t.xs[i]
		sy += t.ys[i]
	}
	mx, my := sx/float64(t.count), sy/float64(t.count)
	var num, den float64
	for i := 0; i < t.count; i++ {
		dx := t.xs[i] - mx
		num += dx * (t.ys[i] - my)
		den += dx * dx
	}
	if den == 0 || !finite(num/den) {
		return 0, false
	}
	return num / den, true
}
