package yamlfield

import (
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// parsed decodes a single value with parse, recording parse's error as the
// field's problem.
func parsed[T any](d *Decoder, n *yaml.Node, field string, parse func(string) (T, error), dst *T) {
	s, ok := d.Scalar(n, field)
	if !ok {
		return
	}
	v, err := parse(s)
	if err != nil {
		d.Failf(n, field, "%v", err)
		return
	}
	*dst = v
}

// Rate stores a rate with a unit ("10Mbps") in dst, in bit/s.
func (d *Decoder) Rate(n *yaml.Node, field string, dst *float64) {
	parsed(d, n, field, ParseRate, dst)
}

// Duration stores a non-negative duration with a unit ("100ms") in dst.
func (d *Decoder) Duration(n *yaml.Node, field string, dst *time.Duration) {
	parsed(d, n, field, ParseDuration, dst)
}

// Probability stores "5%" or a fraction in [0, 1] in dst.
func (d *Decoder) Probability(n *yaml.Node, field string, dst *float64) {
	parsed(d, n, field, ParseProbability, dst)
}

// Bytes stores a byte size ("60KB", at most 1 TB) in dst.
func (d *Decoder) Bytes(n *yaml.Node, field string, dst *int) {
	s, ok := d.Scalar(n, field)
	if !ok {
		return
	}
	v, _, err := ParseSize(s, false)
	if err != nil {
		d.Failf(n, field, "%v", err)
		return
	}
	if v > 1<<40 {
		d.Failf(n, field, "size %q too large", s)
		return
	}
	*dst = int(v)
}

// Number stores a finite number in dst.
func (d *Decoder) Number(n *yaml.Node, field string, dst *float64) {
	s, ok := d.Scalar(n, field)
	if !ok {
		return
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v != v || v > 1e300 || v < -1e300 {
		d.Failf(n, field, "%q is not a number", s)
		return
	}
	*dst = v
}

// Integer stores a whole number in [lo, hi] in dst.
func (d *Decoder) Integer(n *yaml.Node, field string, lo, hi int, dst *int) {
	s, ok := d.Scalar(n, field)
	if !ok {
		return
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		d.Failf(n, field, "%q is not a whole number", s)
		return
	}
	if v < lo || v > hi {
		d.Failf(n, field, "%d is outside [%d, %d]", v, lo, hi)
		return
	}
	*dst = v
}

// Boolean stores true/yes/on or false/no/off (any case) in dst.
func (d *Decoder) Boolean(n *yaml.Node, field string, dst *bool) {
	s, ok := d.Scalar(n, field)
	if !ok {
		return
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		*dst = true
	case "false", "no", "off":
		*dst = false
	default:
		d.Failf(n, field, "%q is not true or false", s)
	}
}
