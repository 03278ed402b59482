package audiobridge

import (
	"path/filepath"
	"testing"
)

func TestConfinedPaths(t *testing.T) {
	base := t.TempDir()
	ok := map[[2]string]string{
		{"", "a.wav"}:                           filepath.Join(base, "a.wav"),
		{"sub", "a.wav"}:                        filepath.Join(base, "sub", "a.wav"),
		{"", filepath.Join(base, "x", "b.wav")}: filepath.Join(base, "x", "b.wav"),
		{filepath.Join(base, "d"), "c.wav"}:     filepath.Join(base, "d", "c.wav"),
	}
	for in, want := range ok {
		if got, err := confined(base, in[0], in[1]); err != nil || got != want {
			t.Errorf("confined(%q, %q) = %q, %v; want %q", in[0], in[1], got, err, want)
		}
	}
	for _, in := range [][2]string{{"", "../x.wav"}, {"", "/etc/passwd"}, {"/tmp", "x.wav"}, {"a/../..", "x"}, {"", base + "/../y"}} {
		if got, err := confined(base, in[0], in[1]); err == nil || err.Code != ErrInvalid {
			t.Errorf("confined(%q, %q) = %q, %v; want a 484", in[0], in[1], got, err)
		}
	}
}
