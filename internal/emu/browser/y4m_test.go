package browser

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The generated video is a valid y4m of the asked size and length, the same for the same seed.
func TestNoiseY4M(t *testing.T) {
	dir := t.TempDir()
	read := func(name string, seed uint64) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := writeNoiseY4M(path, 65, 36, 29.97, 0.5, seed); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := read("a.y4m", 1), read("b.y4m", 1), read("c.y4m", 2)
	header := "YUV4MPEG2 W64 H36 F29970:1000 Ip A1:1 C420jpeg\n"
	if !bytes.HasPrefix(a, []byte(header)) {
		t.Fatalf("header %q", a[:min(len(a), 60)])
	}
	const frames, frameBytes = 15, 64 * 36 * 3 / 2 // round(29.97 * 0.5) frames of 4:2:0
	if got := bytes.Count(a, []byte("FRAME\n")); got != frames {
		t.Fatalf("%d frames, want %d", got, frames)
	}
	if len(a) != len(header)+frames*(len("FRAME\n")+frameBytes) {
		t.Fatalf("%d bytes", len(a))
	}
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("the content must depend on the seed, and only on it")
	}
}
