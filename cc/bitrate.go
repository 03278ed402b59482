package cc

import (
	"math"
	"strconv"
	"time"
)

// Bitrate is a rate in bits per second.
type Bitrate int64

// Common rates, so that callers can write 300*cc.Kbps.
const (
	BitPerSecond Bitrate = 1
	Kbps                 = 1000 * BitPerSecond
	Mbps                 = 1000 * Kbps
)

// MaxBitrate bounds every rate a controller reports (1 Tbit/s): far above any real link, and far
// enough below math.MaxInt64 that sums of a few rates cannot overflow.
const MaxBitrate = Bitrate(1e12)

// BitrateFromFloat converts a rate computed in floating point (bit/s) to a Bitrate, rounding to the
// nearest bit/s. NaN and negative values give 0 and values above MaxBitrate give MaxBitrate, so a
// controller's output is always finite and non-negative whatever its input.
func BitrateFromFloat(bps float64) Bitrate {
	switch {
	case math.IsNaN(bps) || bps <= 0:
		return 0
	case bps >= float64(MaxBitrate):
		return MaxBitrate
	}
	return Bitrate(math.Round(bps))
}

// BitrateOf is the rate that carries bytes in d; 0 when d is not positive.
func BitrateOf(bytes int, d time.Duration) Bitrate {
	if d <= 0 || bytes <= 0 {
		return 0
	}
	return BitrateFromFloat(float64(bytes) * 8 / d.Seconds())
}

// Bps returns the rate as a float64 in bit/s.
func (r Bitrate) Bps() float64 { return float64(r) }

// Kbps returns the rate in kbit/s.
func (r Bitrate) Kbps() float64 { return float64(r) / 1e3 }

// BytesIn is how many whole bytes the rate carries in d.
func (r Bitrate) BytesIn(d time.Duration) int {
	if r <= 0 || d <= 0 {
		return 0
	}
	return int(float64(r) * d.Seconds() / 8)
}

// TimeFor is how long the rate takes to carry bytes; 0 when the rate is not positive.
func (r Bitrate) TimeFor(bytes int) time.Duration {
	if r <= 0 || bytes <= 0 {
		return 0
	}
	return time.Duration(float64(bytes) * 8 / float64(r) * float64(time.Second))
}

// String formats the rate with a unit, e.g. "1.5 Mbit/s".
func (r Bitrate) String() string {
	switch v := float64(r); {
	case r >= Mbps:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + " Mbit/s"
	case r >= Kbps:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + " kbit/s"
	default:
		return strconv.FormatInt(int64(r), 10) + " bit/s"
	}
}
