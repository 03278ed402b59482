package cc

import "time"

// PacingRateFor is the pacing rate of a window controller: gain × cwnd per smoothed RTT, or 0
// (unpaced) before the first RTT sample. Window controllers use gain 1.25, enough headroom for the
// window to grow while spreading each window over the RTT instead of sending it as a burst.
func PacingRateFor(cwnd int, srtt time.Duration, gain float64) Bitrate {
	if srtt <= 0 || cwnd <= 0 {
		return 0
	}
	return BitrateFromFloat(gain * float64(cwnd) * 8 / srtt.Seconds())
}
