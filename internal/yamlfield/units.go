package yamlfield

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SplitNumber splits "1.5Mbps" into 1.5 and "Mbps" (the unit trimmed of spaces).
func SplitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' ||
		((s[i] == 'e' || s[i] == 'E') && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+'))) {
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%q is not a number with a unit", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a number with a unit", s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

var rateUnits = map[string]float64{
	"bps": 1, "bit/s": 1, "b/s": 1,
	"kbps": 1e3, "Kbps": 1e3, "kbit/s": 1e3, "Kbit/s": 1e3,
	"Mbps": 1e6, "mbps": 1e6, "Mbit/s": 1e6,
	"Gbps": 1e9, "gbps": 1e9, "Gbit/s": 1e9,
}

// RateUnit returns the bit/s in one unit of a rate unit such as "Mbps".
func RateUnit(unit string) (float64, bool) {
	mul, ok := rateUnits[unit]
	return mul, ok
}

// ParseRate parses a rate such as "10Mbps" or "1.5 Mbit/s" into bit/s.
func ParseRate(s string) (float64, error) {
	v, unit, err := SplitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("missing unit in %q (write e.g. %gMbps or %gkbps)", s, v, v)
	}
	mul, ok := rateUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown rate unit %q in %q (use bps, kbps, Mbps or Gbps)", unit, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative rate %q", s)
	}
	if math.IsInf(v*mul, 0) {
		return 0, fmt.Errorf("rate %q too large", s)
	}
	return v * mul, nil
}

// ParseDuration parses a Go duration such as "100ms" or "1.5s".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("missing unit in %q (write e.g. %sms or %ss)", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 100ms, 2s, 1m30s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, nil
}

var sizeUnits = map[string]float64{
	"B": 1, "bytes": 1, "KB": 1e3, "kB": 1e3, "KiB": 1024, "MB": 1e6, "MiB": 1 << 20,
}

var packetUnits = map[string]bool{"pkt": true, "pkts": true, "packets": true, "p": true}

// ParseSize parses a byte size ("60KB") or, when packets is true, also a
// packet count ("100pkt"); it reports which.
func ParseSize(s string, packets bool) (v float64, isPackets bool, err error) {
	v, unit, err := SplitNumber(s)
	if err != nil {
		return 0, false, err
	}
	if v < 0 {
		return 0, false, fmt.Errorf("negative size %q", s)
	}
	if unit == "" {
		if packets {
			return 0, false, fmt.Errorf("missing unit in %q (write e.g. %gpkt, %gKB or %gms)", s, v, v, v)
		}
		return 0, false, fmt.Errorf("missing unit in %q (write e.g. %gB or %gKB)", s, v, v)
	}
	if packets && packetUnits[unit] {
		if v != math.Trunc(v) {
			return 0, false, fmt.Errorf("packet count %q is not whole", s)
		}
		return v, true, nil
	}
	mul, ok := sizeUnits[unit]
	if !ok {
		return 0, false, fmt.Errorf("unknown size unit %q in %q (use B, KB, KiB, MB or pkt)", unit, s)
	}
	return v * mul, false, nil
}

// ParseProbability parses "5%" or a fraction in [0, 1].
func ParseProbability(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "%") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil || v < 0 || v > 100 {
			return 0, fmt.Errorf("%q is not a percentage between 0%% and 100%%", s)
		}
		return v / 100, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 1 || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a probability (write a percentage like 5%% or a fraction in [0,1])", s)
	}
	return v, nil
}

// IsDurationUnit reports whether s ends in a time unit.
func IsDurationUnit(s string) bool {
	_, unit, err := SplitNumber(s)
	if err != nil {
		return false
	}
	switch unit {
	case "ns", "us", "µs", "ms", "s", "m", "h":
		return true
	}
	return false
}
