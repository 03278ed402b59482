package yamlfield

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// root parses doc and returns its top node.
func root(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// problems returns the decoder's problems, or nil when it found none.
func problems(t *testing.T, d *Decoder) []string {
	t.Helper()
	err := d.Err()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is a %T, want *Error", err)
	}
	if err.Error() != strings.Join(e.Problems, "\n") {
		t.Fatalf("Error() %q does not list the problems %q", err, e.Problems)
	}
	return e.Problems
}

func TestMappingVisitsKnownFieldsInOrder(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	var order []string
	var name string
	var on bool
	d.Mapping(root(t, "on: yes\nname: x\n"), "", map[string]FieldFunc{
		"name": func(v *yaml.Node, f string) { order = append(order, f); d.Str(v, f, &name) },
		"on":   func(v *yaml.Node, f string) { order = append(order, f); d.Boolean(v, f, &on) },
	})
	if p := problems(t, d); p != nil {
		t.Fatalf("problems %q", p)
	}
	if strings.Join(order, ",") != "on,name" || name != "x" || !on {
		t.Fatalf("order %v name %q on %v", order, name, on)
	}
}

func TestMappingReportsEveryProblem(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	doc := "outer:\n  a: 1\n  colour: blue\n  a: 2\n  [x]: 3\n"
	var a string
	d.Mapping(root(t, doc), "", map[string]FieldFunc{
		"outer": func(v *yaml.Node, f string) {
			d.Mapping(v, f, map[string]FieldFunc{"a": func(v *yaml.Node, f string) { d.Str(v, f, &a) }})
		},
	})
	want := []string{
		`f.yaml:3: outer.colour: unknown field "colour" (known: a)`,
		`f.yaml:4: outer.a: field given twice`,
		`f.yaml:5: outer: field names must be plain words`,
	}
	if got := problems(t, d); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a != "1" {
		t.Fatalf("a = %q, want the first value", a)
	}
	if !d.FieldFailed("outer.colour") || d.FieldFailed("outer.a.b") || d.Count() != 3 {
		t.Fatalf("FieldFailed/Count wrong: %d", d.Count())
	}
}

func TestRootName(t *testing.T) {
	for _, c := range []struct{ root, want string }{
		{"", "f.yaml:1: : expected a mapping of fields"},
		{"(top level)", "f.yaml:1: (top level): expected a mapping of fields"},
	} {
		d := &Decoder{File: "f.yaml", Root: c.root}
		d.Mapping(root(t, "[1, 2]"), "", nil)
		if got := problems(t, d); len(got) != 1 || got[0] != c.want {
			t.Errorf("root %q: %q, want %q", c.root, got, c.want)
		}
	}
}

func TestSequenceFollowsAliases(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	var list []string
	var idx []int
	doc := "base: &b [x, y]\nuse: *b\n"
	d.Mapping(root(t, doc), "", map[string]FieldFunc{
		"base": func(*yaml.Node, string) {},
		"use": func(v *yaml.Node, f string) {
			d.Sequence(v, f, func(_ *yaml.Node, _ string, i int) { idx = append(idx, i) })
			d.StrList(v, f, &list)
		},
	})
	if p := problems(t, d); p != nil {
		t.Fatalf("problems %q", p)
	}
	if strings.Join(list, ",") != "x,y" || len(idx) != 2 || idx[1] != 1 {
		t.Fatalf("list %v indices %v", list, idx)
	}
}

func TestSequenceItemPaths(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	var list []string
	d.StrList(root(t, "- a\n- [b]\n- c\n"), "names", &list)
	got := problems(t, d)
	if len(got) != 1 || got[0] != "f.yaml:2: names[1]: expected a single value" {
		t.Fatalf("problems %q", got)
	}
	if strings.Join(list, ",") != "a,c" {
		t.Fatalf("list %v", list)
	}
	d.Sequence(root(t, "a: 1"), "names", nil)
	if got := problems(t, d); got[1] != "f.yaml:1: names: expected a list" {
		t.Fatalf("problems %q", got)
	}
}

// field decodes the value of "v: TEXT" with dec, returning its problem, if any.
func field(t *testing.T, text string, dec func(d *Decoder, n *yaml.Node)) string {
	t.Helper()
	d := &Decoder{File: "f.yaml"}
	dec(d, root(t, "v: "+text).Content[1])
	if p := problems(t, d); p != nil {
		return p[0]
	}
	return ""
}

func TestValueDecoders(t *testing.T) {
	var r, num, p float64
	var dur time.Duration
	var b, i int
	var on bool
	rate := func(d *Decoder, n *yaml.Node) { d.Rate(n, "v", &r) }
	duration := func(d *Decoder, n *yaml.Node) { d.Duration(n, "v", &dur) }
	bytes := func(d *Decoder, n *yaml.Node) { d.Bytes(n, "v", &b) }
	number := func(d *Decoder, n *yaml.Node) { d.Number(n, "v", &num) }
	integer := func(d *Decoder, n *yaml.Node) { d.Integer(n, "v", 1, 10, &i) }
	prob := func(d *Decoder, n *yaml.Node) { d.Probability(n, "v", &p) }
	boolean := func(d *Decoder, n *yaml.Node) { d.Boolean(n, "v", &on) }
	for _, c := range []struct {
		text string
		dec  func(*Decoder, *yaml.Node)
		want string // the problem, "" when the value is good
	}{
		{"2Mbps", rate, ""},
		{"10", rate, `f.yaml:1: v: missing unit in "10" (write e.g. 10Mbps or 10kbps)`},
		{"[1]", rate, "f.yaml:1: v: expected a single value"},
		{"250ms", duration, ""},
		{"-1s", duration, `f.yaml:1: v: negative duration "-1s"`},
		{"3KB", bytes, ""},
		{"2000000MB", bytes, `f.yaml:1: v: size "2000000MB" too large`},
		{"1.5", number, ""},
		{"NaN", number, `f.yaml:1: v: "NaN" is not a number`},
		{"7", integer, ""},
		{"11", integer, "f.yaml:1: v: 11 is outside [1, 10]"},
		{"1.5", integer, `f.yaml:1: v: "1.5" is not a whole number`},
		{"5%", prob, ""},
		{"2", prob, `f.yaml:1: v: "2" is not a probability (write a percentage like 5% or a fraction in [0,1])`},
		{"On", boolean, ""},
		{"maybe", boolean, `f.yaml:1: v: "maybe" is not true or false`},
	} {
		if got := field(t, c.text, c.dec); got != c.want {
			t.Errorf("%q: problem %q, want %q", c.text, got, c.want)
		}
	}
	if r != 2e6 || dur != 250*time.Millisecond || b != 3000 || num != 1.5 || i != 7 || p != 0.05 || !on {
		t.Fatalf("decoded %v %v %v %v %v %v %v", r, dur, b, num, i, p, on)
	}
}
