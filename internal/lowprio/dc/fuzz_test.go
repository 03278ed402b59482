package dc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseLabel: any label either fails or gives a verb and a name that rebuild it, and the name
// is safe to join to a directory.
func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"lowprio:get:a.bin", "lowprio:put:gen:10", "lowprio:get:../x", "lowprio:get:/x",
		"lowprio:put:a/./b", "lowprio:get:a\x00", "lowprio::x", "x", "lowprio:get:\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		verb, name, err := ParseLabel(label)
		if err != nil {
			return
		}
		if Label(verb, name) != label {
			t.Fatalf("%q → %q, %q", label, verb, name)
		}
		if name == "" || len(name) > MaxName || !utf8.ValidString(name) || strings.HasPrefix(name, "/") ||
			strings.Contains(name, "\x00") || name == ".." || strings.HasPrefix(name, "../") ||
			strings.HasSuffix(name, "/..") || strings.Contains(name, "/../") {
			t.Fatalf("unsafe name %q accepted", name)
		}
		if n, gen, err := ParseGenerated(name); gen && err == nil && n < 0 {
			t.Fatalf("negative length %d", n)
		}
	})
}
