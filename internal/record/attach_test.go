package record

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfine(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		dir, name, want string // want "" for a refusal
	}{
		{"", "a-audio.mjr", "a-audio.mjr"},
		{"", "calls/a-audio.mjr", "calls/a-audio.mjr"},
		{"room", "a.mjr", "room/a.mjr"},
		{"room", "../a.mjr", "a.mjr"},
		{"", filepath.Join(root, "x", "a.mjr"), "x/a.mjr"},
		{filepath.Join(root, "r"), "a.mjr", "r/a.mjr"},
		{"", "../a.mjr", ""},
		{"..", "a.mjr", ""},
		{"room", "../../a.mjr", ""},
		{"", "/etc/passwd", ""},
		{"/tmp", "a.mjr", ""},
		{"", ".", ""},
		{"", root + "-other/a.mjr", ""},
	} {
		got, err := Confine(root, tc.dir, tc.name)
		if tc.want == "" {
			if err == nil || !errors.Is(err, ErrOutside) {
				t.Errorf("Confine(%q, %q) = %q, %v: want a refusal", tc.dir, tc.name, got, err)
			}
			continue
		}
		if want := filepath.Join(root, tc.want); err != nil || got != want {
			t.Errorf("Confine(%q, %q) = %q, %v: want %q", tc.dir, tc.name, got, err, want)
		}
	}
}

// Whatever a request names, Confine returns a path strictly inside the directory or an error.
func FuzzConfine(f *testing.F) {
	for _, s := range []string{"a.mjr", "../a", "/etc/passwd", "room/../../x", "", ".", "a/./b/../c", "\x00"} {
		f.Add("room", s)
		f.Add("", s)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, dir, name string) {
		got, err := Confine(root, dir, name)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, root+string(filepath.Separator)) || filepath.Clean(got) != got {
			t.Fatalf("Confine(%q, %q) = %q, outside %s", dir, name, got, root)
		}
	})
}
