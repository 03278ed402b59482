package videogen

import (
	"bytes"
	"testing"
)

// The frames are 4:2:0 of the (even) size asked, change every frame, depend on the seed and
// only on it, and repeat after the loop.
func TestNoise(t *testing.T) {
	frames := func(seed uint64, loop, n int) [][]byte {
		g, err := NewNoise(65, 37, seed, loop)
		if err != nil {
			t.Fatal(err)
		}
		if w, h := g.Size(); w != 64 || h != 36 {
			t.Fatalf("size %dx%d", w, h)
		}
		var out [][]byte
		for range n {
			out = append(out, bytes.Clone(g.Next()))
		}
		return out
	}
	a, b, c := frames(1, 4, 9), frames(1, 0, 9), frames(2, 4, 9)
	for i, f := range a {
		if len(f) != 64*36*3/2 {
			t.Fatalf("frame %d: %d bytes", i, len(f))
		}
		if i < 4 && !bytes.Equal(f, b[i]) || bytes.Equal(f, c[i]) {
			t.Fatalf("frame %d: the content must depend on the seed, and only on it", i)
		}
		if i > 0 && bytes.Equal(f, a[i-1]) {
			t.Fatalf("frame %d repeats the one before", i)
		}
	}
	if !bytes.Equal(a[4], a[0]) || !bytes.Equal(a[8], a[0]) || bytes.Equal(b[4], b[0]) {
		t.Fatal("the video must repeat after its loop, and only then")
	}
	for _, size := range [][2]int{{0, 10}, {10, 1}, {1 << 15, 10}} {
		if _, err := NewNoise(size[0], size[1], 1, 0); err == nil {
			t.Errorf("%dx%d accepted", size[0], size[1])
		}
	}
}

func BenchmarkNoise720p(b *testing.B) {
	g, err := NewNoise(1280, 720, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		g.Next()
	}
}
