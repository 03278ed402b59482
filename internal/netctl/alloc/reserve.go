package alloc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Media reservation (netctl -reserve). Left to itself the controller yields to elastic background
// traffic: it counts what TCP uses as background and gives managed media only the rest, and since
// TCP grows until the bottleneck's queue overflows, media gets less and less and still loses
// packets in the full queue (seed 000's experiment 3). With a reservation, on the links where a
// switch can police what enters them (those leaving an enforcement node), media may use up to a
// share of the capacity whatever the background does, and the switch meters the non-media traffic
// entering the link to what the media allocation leaves: TCP then adapts to the meter's drops
// instead of filling the queue.

// Reserved is what a link leaves managed streams with a reservation: the capacity minus the
// background, but never less than reserve × capacity (reserve 0: no reservation).
func Reserved(capacity, background cc.Bitrate, reserve float64) cc.Bitrate {
	avail := capacity - background
	if reserve <= 0 {
		return avail
	}
	return max(avail, cc.BitrateFromFloat(reserve*float64(capacity)))
}

// MeterRate is the rate the switch lets non-media traffic into a link with a reservation: the
// capacity minus the managed media's rate with its burst margin, but never less than the share
// the reservation leaves ((1 − reserve) × capacity), so background traffic always keeps that, even
// while the base layers alone are over their reservation.
func MeterRate(capacity, media cc.Bitrate, margin, reserve float64) cc.Bitrate {
	floor := cc.BitrateFromFloat((1 - min(max(reserve, 0), 1)) * float64(capacity))
	return max(floor, capacity-cc.BitrateFromFloat(float64(media)*(1+margin)))
}

// MeterOpening is the rate of a meter that appeared age ago, opening over rise: a bulk flow that
// started before the media has filled the link's queue by the time the first subscription is
// known, and a meter at the computed rate only nudges it (TCP gives up a fraction of its window
// per loss); media would lose packets in that queue for seconds. So a new meter starts at the
// reservation's floor ((1 − reserve) × capacity), which drains the queue at once, and opens to
// rate in four equal steps over rise (rise 0: rate at once; never above rate).
func MeterOpening(rate, capacity cc.Bitrate, reserve float64, age, rise time.Duration) cc.Bitrate {
	const steps = 4
	if rise <= 0 || age >= rise {
		return rate
	}
	floor := cc.BitrateFromFloat((1 - min(max(reserve, 0), 1)) * float64(capacity))
	if rate <= floor {
		return rate
	}
	step := int64(age * steps / rise) // 0..steps-1
	return floor + (rate-floor)*cc.Bitrate(step)/steps
}
