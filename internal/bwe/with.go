package bwe

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// With runs f under the estimator's lock with the interceptor's clock and the controller, for a
// sender that drives the controller beyond feedback: a pacer reading the pacing rate and probe
// clusters, a receive-side report arriving in RTCP. f must not block.
func (e *Estimator) With(f func(now time.Duration, c cc.RateController)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e.clock(), e.ctrl)
}
