package yamlfield

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error lists every problem found in a file, each as "file:line: field: message".
type Error struct{ Problems []string }

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }

// Decoder walks a YAML node tree, collecting every problem with its position
// instead of stopping at the first.
type Decoder struct {
	// File names the file in messages.
	File string
	// Root names the document root in messages whose field path is empty
	// (e.g. "(top level)"); when empty the field is printed as is.
	Root string

	problems []string
	failed   map[string]bool // field paths that already have a problem
}

// FieldFunc decodes the value of one field; field is its full path.
type FieldFunc func(v *yaml.Node, field string)

// Failf records a problem at n's line (0 when n is nil).
func (d *Decoder) Failf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.FailLine(line, field, format, args...)
}

// FailLine records a problem at a given line.
func (d *Decoder) FailLine(line int, field, format string, args ...any) {
	if d.failed == nil {
		d.failed = map[string]bool{}
	}
	d.failed[field] = true
	where := field
	if where == "" && d.Root != "" {
		where = d.Root
	}
	d.problems = append(d.problems, fmt.Sprintf("%s:%d: %s: %s", d.File, line, where, fmt.Sprintf(format, args...)))
}

// FieldFailed reports whether a problem was recorded for exactly this field
// path, so callers can skip follow-up checks that would only add noise.
func (d *Decoder) FieldFailed(field string) bool { return d.failed[field] }

// Count returns the number of problems recorded so far; comparing counts
// tells whether a step added any.
func (d *Decoder) Count() int { return len(d.problems) }

// Err returns an *Error with every problem, or nil when there is none.
func (d *Decoder) Err() error {
	if len(d.problems) == 0 {
		return nil
	}
	return &Error{Problems: d.problems}
}

// Deref follows aliases a bounded number of times, so that a crafted
// document cannot loop.
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// Join appends key to a field path.
func Join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// Mapping visits a mapping's keys in file order, calling the handler of each
// known key; unknown and duplicate keys are problems.
func (d *Decoder) Mapping(n *yaml.Node, field string, fields map[string]FieldFunc) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.Failf(n, field, "expected a mapping of fields")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := Deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			d.Failf(n.Content[i], field, "field names must be plain words")
			continue
		}
		sub := Join(field, k.Value)
		fn, ok := fields[k.Value]
		switch {
		case !ok:
			d.Failf(k, sub, "unknown field %q (known: %s)", k.Value, strings.Join(fieldNames(fields), ", "))
		case seen[k.Value]:
			d.Failf(k, sub, "field given twice")
		default:
			seen[k.Value] = true
			fn(Deref(n.Content[i+1]), sub)
		}
	}
}

func fieldNames(m map[string]FieldFunc) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Sequence visits a list's items; item gets each one's path ("field[i]") and index.
func (d *Decoder) Sequence(n *yaml.Node, field string, item func(v *yaml.Node, field string, i int)) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.Failf(n, field, "expected a list")
		return
	}
	for i, v := range n.Content {
		item(Deref(v), fmt.Sprintf("%s[%d]", field, i), i)
	}
}

// Scalar returns a single value's text.
func (d *Decoder) Scalar(n *yaml.Node, field string) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		d.Failf(n, field, "expected a single value")
		return "", false
	}
	return n.Value, true
}

// Str stores a single value's text in dst.
func (d *Decoder) Str(n *yaml.Node, field string, dst *string) {
	if s, ok := d.Scalar(n, field); ok {
		*dst = s
	}
}

// StrList stores a list of single values in dst.
func (d *Decoder) StrList(n *yaml.Node, field string, dst *[]string) {
	var out []string
	d.Sequence(n, field, func(v *yaml.Node, f string, _ int) {
		if s, ok := d.Scalar(v, f); ok {
			out = append(out, s)
		}
	})
	*dst = out
}
