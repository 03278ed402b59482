package dc

import (
	"errors"
	"strings"
	"testing"
)

func TestLabels(t *testing.T) {
	for _, c := range []struct {
		label, verb, name string
		err               error
	}{
		{"lowprio:get:video/a.webm", "get", "video/a.webm", nil},
		{"lowprio:put:gen:10000000", "put", "gen:10000000", nil},
		{"lowprio:get:a:b", "get", "a:b", nil},
		{"lowprio:get:..a", "get", "..a", nil},
		{"chat", "", "", ErrLabel},
		{"lowprio:del:x", "", "", ErrLabel},
		{"lowprio:get", "", "", ErrLabel},
		{"lowprio:get:", "", "", ErrName},
		{"lowprio:get:/etc/passwd", "", "", ErrName},
		{"lowprio:get:a/../../etc", "", "", ErrName},
		{"lowprio:get:..", "", "", ErrName},
		{"lowprio:put:a\x00b", "", "", ErrName},
		{"lowprio:put:\xff", "", "", ErrName},
		{"lowprio:put:" + strings.Repeat("n", MaxName+1), "", "", ErrName},
	} {
		verb, name, err := ParseLabel(c.label)
		if !errors.Is(err, c.err) || verb != c.verb || name != c.name {
			t.Errorf("ParseLabel(%q) = %q, %q, %v; want %q, %q, %v", c.label, verb, name, err, c.verb, c.name, c.err)
		}
		if c.err == nil && Label(verb, name) != c.label {
			t.Errorf("Label(%q, %q) = %q", verb, name, Label(verb, name))
		}
	}
	if _, _, err := ParseLabel("lowprio:put:" + strings.Repeat("n", MaxName)); err != nil {
		t.Errorf("a %d-byte name: %v", MaxName, err)
	}
}

func TestParseGenerated(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       int64
		gen, ok bool
	}{
		{"gen:0", 0, true, true},
		{"gen:10000000", 10_000_000, true, true},
		{"file.bin", 0, false, true},
		{"gen:", 0, true, false},
		{"gen:-1", 0, true, false},
		{"gen:1e6", 0, true, false},
		{"gen:99999999999999999999", 0, true, false},
	} {
		n, gen, err := ParseGenerated(c.name)
		if n != c.n || gen != c.gen || (err == nil) != c.ok {
			t.Errorf("ParseGenerated(%q) = %d, %v, %v", c.name, n, gen, err)
		}
	}
}

func TestInitAndVariant(t *testing.T) {
	i := Init()
	if *i.Ordered || *i.MaxRetransmits != MaxRetransmits || *i.Protocol != Protocol {
		t.Fatalf("Init: ordered %v, maxRetransmits %d, protocol %q", *i.Ordered, *i.MaxRetransmits, *i.Protocol)
	}
	for _, v := range []string{"", VariantLEDBAT, VariantLEDBATPlus} {
		if err := CheckVariant(v); err != nil {
			t.Error(v, err)
		}
	}
	if CheckVariant("cubic") == nil {
		t.Error("cubic accepted")
	}
}
