package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
)

var rateUnits = map[string]float64{
	"bps": 1, "bit/s": 1,
	"kbps": 1e3, "Kbps": 1e3, "kbit/s": 1e3, "Kbit/s": 1e3,
	"Mbps": 1e6, "mbps": 1e6, "Mbit/s": 1e6,
	"Gbps": 1e9, "gbps": 1e9, "Gbit/s": 1e9,
}

// ParseRate parses a rate with a unit, such as "10Mbps", "1.5 Mbit/s" or "600kbps". A number
// without a unit is an error (is "10" bit/s or Mbit/s?), and so is a negative rate.
func ParseRate(s string) (cc.Bitrate, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' || s[i] == 'E') {
		i++
	}
	// "e" may start a unit only if no digit follows; no rate unit starts with e, so this is safe.
	num, unit := s[:i], strings.TrimSpace(s[i:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a rate (write e.g. 10Mbps or 600kbps)", s)
	}
	if unit == "" {
		return 0, fmt.Errorf("rate %q has no unit (write e.g. %sMbps or %skbps)", s, num, num)
	}
	mul, ok := rateUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown rate unit %q in %q (use bps, kbps, Mbps or Gbps)", unit, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative rate %q", s)
	}
	if v*mul > float64(cc.MaxBitrate) {
		return 0, fmt.Errorf("rate %q above %v", s, cc.MaxBitrate)
	}
	return cc.BitrateFromFloat(v * mul), nil
}

// ParseDelay parses a non-negative Go duration with a unit ("6ms", "1.5s").
func ParseDelay(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("delay %q has no unit (write e.g. %sms)", s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 6ms or 1.5s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative delay %q", s)
	}
	return d, nil
}
