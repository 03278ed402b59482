package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Error lists every problem found in a scenario file, each as
// "file:line: field: message".
type Error struct{ Problems []string }

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }

// decoder walks a YAML node tree, collecting errors with their positions.
type decoder struct {
	file string
	errs []string
}

func (d *decoder) failf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, fmt.Sprintf("%s:%d: %s: %s", d.file, line, field, fmt.Sprintf(format, args...)))
}

func (d *decoder) failLine(line int, field, format string, args ...any) {
	d.errs = append(d.errs, fmt.Sprintf("%s:%d: %s: %s", d.file, line, field, fmt.Sprintf(format, args...)))
}

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return &Error{Problems: d.errs}
}

// deref follows aliases (bounded, so a pathological document cannot loop).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

type fieldFn func(v *yaml.Node, field string)

// mapping visits a mapping's keys in file order, calling the handler of
// each known key; unknown and duplicate keys are errors.
func (d *decoder) mapping(n *yaml.Node, field string, fields map[string]fieldFn) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.failf(n, field, "expected a mapping of fields")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.failf(n.Content[i], field, "field names must be plain words")
			continue
		}
		sub := join(field, k.Value)
		fn, ok := fields[k.Value]
		if !ok {
			d.failf(k, sub, "unknown field %q (known: %s)", k.Value, strings.Join(keys(fields), ", "))
			continue
		}
		if seen[k.Value] {
			d.failf(k, sub, "field given twice")
			continue
		}
		seen[k.Value] = true
		fn(deref(v), sub)
	}
}

func keys(m map[string]fieldFn) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// sequence visits a sequence's items.
func (d *decoder) sequence(n *yaml.Node, field string, item func(v *yaml.Node, field string, i int)) {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.failf(n, field, "expected a list")
		return
	}
	for i, v := range n.Content {
		item(deref(v), fmt.Sprintf("%s[%d]", field, i), i)
	}
}

// scalar returns a scalar's text.
func (d *decoder) scalar(n *yaml.Node, field string) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		d.failf(n, field, "expected a single value")
		return "", false
	}
	return n.Value, true
}

func (d *decoder) str(n *yaml.Node, field string, dst *string) {
	if s, ok := d.scalar(n, field); ok {
		*dst = s
	}
}

func (d *decoder) strList(n *yaml.Node, field string, dst *[]string) {
	var out []string
	d.sequence(n, field, func(v *yaml.Node, f string, _ int) {
		if s, ok := d.scalar(v, f); ok {
			out = append(out, s)
		}
	})
	*dst = out
}

func (d *decoder) rate(n *yaml.Node, field string, dst *float64) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	v, err := parseRate(s)
	if err != nil {
		d.failf(n, field, "%v", err)
		return
	}
	*dst = v
}

func (d *decoder) duration(n *yaml.Node, field string, dst *time.Duration) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	v, err := parseDuration(s)
	if err != nil {
		d.failf(n, field, "%v", err)
		return
	}
	*dst = v
}

func (d *decoder) bytes(n *yaml.Node, field string, dst *int) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	v, _, err := parseSize(s, false)
	if err != nil {
		d.failf(n, field, "%v", err)
		return
	}
	if v > 1<<40 {
		d.failf(n, field, "size %q too large", s)
		return
	}
	*dst = int(v)
}

func (d *decoder) probability(n *yaml.Node, field string, dst *float64) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	v, err := parseProbability(s)
	if err != nil {
		d.failf(n, field, "%v", err)
		return
	}
	*dst = v
}

func (d *decoder) number(n *yaml.Node, field string, dst *float64) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v != v || v > 1e300 || v < -1e300 {
		d.failf(n, field, "%q is not a number", s)
		return
	}
	*dst = v
}

func (d *decoder) integer(n *yaml.Node, field string, lo, hi int, dst *int) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		d.failf(n, field, "%q is not a whole number", s)
		return
	}
	if v < lo || v > hi {
		d.failf(n, field, "%d is outside [%d, %d]", v, lo, hi)
		return
	}
	*dst = v
}

func (d *decoder) boolean(n *yaml.Node, field string, dst *bool) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		*dst = true
	case "false", "no", "off":
		*dst = false
	default:
		d.failf(n, field, "%q is not true or false", s)
	}
}
