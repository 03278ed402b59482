package scenario

import (
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// StartAt is when the flow starts in a run with the given seed: its start,
// plus, with a start jitter, a uniformly random offset in [0, jitter) drawn
// from the flow's own seeded generator. Both engines start flows here.
func (f Flow) StartAt(seed uint64) time.Duration {
	start := f.Start
	if f.StartJitter > 0 {
		rng := sim.NewRNG(seed, "flow/"+f.Name+"/start")
		start += time.Duration(rng.Float64() * float64(f.StartJitter))
	}
	return start
}
