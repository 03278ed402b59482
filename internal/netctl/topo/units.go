package topo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/yamlfield"
)

// ParseRate parses a rate with a unit, such as "10Mbps", "1.5 Mbit/s" or "600kbps". A number
// without a unit is an error (is "10" bit/s or Mbit/s?), and so is a negative rate. The number
// and the units are those of every config file (yamlfield); the wording and the cc.Bitrate
// bound are the topology's.
func ParseRate(s string) (cc.Bitrate, error) {
	s = strings.TrimSpace(s)
	v, unit, err := yamlfield.SplitNumber(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a rate (write e.g. 10Mbps or 600kbps)", s)
	}
	if unit == "" {
		return 0, fmt.Errorf("rate %q has no unit (write e.g. %sMbps or %skbps)", s, s, s)
	}
	mul, ok := yamlfield.RateUnit(unit)
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
