package topo

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder walks a YAML node tree and collects every problem with its line, so that one run of the
// loader reports all mistakes in a file rather than the first.
type decoder struct {
	file   string
	errs   []string
	failed map[string]bool // fields that already have an error
}

func (d *decoder) failf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.failLine(line, field, format, args...)
}

func (d *decoder) failLine(line int, field, format string, args ...any) {
	if d.failed == nil {
		d.failed = map[string]bool{}
	}
	d.failed[field] = true
	where := field
	if where == "" {
		where = "(top level)"
	}
	d.errs = append(d.errs, fmt.Sprintf("%s:%d: %s: %s", d.file, line, where, fmt.Sprintf(format, args...)))
}

// fieldFailed reports whether field, or the item that holds it, already has an error.
func (d *decoder) fieldFailed(field string) bool { return d.failed[field] }

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return &Error{Problems: d.errs}
}

// deref follows aliases, a bounded number of times so that a crafted document cannot loop.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

type fieldFn func(v *yaml.Node, field string)

// mapping calls the handler of each key in file order; unknown and repeated keys are errors.
func (d *decoder) mapping(n *yaml.Node, field string, fields map[string]fieldFn) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.failf(n, field, "expected a mapping (key: value fields)")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			d.failf(n.Content[i], field, "field names must be plain words")
			continue
		}
		sub := k.Value
		if field != "" {
			sub = field + "." + k.Value
		}
		fn, ok := fields[k.Value]
		switch {
		case !ok:
			d.failf(k, sub, "unknown field (known: %s)", strings.Join(fieldNames(fields), ", "))
		case seen[k.Value]:
			d.failf(k, sub, "field given twice")
		default:
			seen[k.Value] = true
			fn(deref(n.Content[i+1]), sub)
		}
	}
}

func fieldNames(m map[string]fieldFn) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sequence calls item for each element of a list.
func (d *decoder) sequence(n *yaml.Node, field string, item func(v *yaml.Node, field string)) {
	if n == nil || n.Kind != yaml.SequenceNode {
		d.failf(n, field, "expected a list")
		return
	}
	for i, v := range n.Content {
		v = deref(v)
		if v == nil {
			d.failf(n, fmt.Sprintf("%s[%d]", field, i), "unresolvable alias")
			continue
		}
		item(v, fmt.Sprintf("%s[%d]", field, i))
	}
}

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

func (d *decoder) boolean(n *yaml.Node, field string, dst *bool) {
	s, ok := d.scalar(n, field)
	if !ok {
		return
	}
	switch s {
	case "true", "yes", "on":
		*dst = true
	case "false", "no", "off":
		*dst = false
	default:
		d.failf(n, field, "%q is not true or false", s)
	}
}
