package videogen

import (
	"testing"
)

// Box scaling keeps a flat picture flat, averages what each box covers (at 1/2, 2x2 blocks; at
// 3/4, boxes of one and two pixels), keeps the chroma planes apart from the luma, and refuses
// frames of the wrong size.
func TestScale(t *testing.T) {
	s, err := NewScaler(8, 4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 8*4*3/2)
	for y := range 4 {
		for x := range 8 {
			src[y*8+x] = byte(10 * (y*8 + x))
		}
	}
	for i := 32; i < 40; i++ {
		src[i] = 100 // U
	}
	for i := 40; i < 48; i++ {
		src[i] = 200 // V
	}
	out, err := s.Scale(src)
	if err != nil {
		t.Fatal(err)
	}
	// Luma (0,0): mean of 0, 10, 80, 90 = 45.
	if out[0] != 45 || out[1] != 65 || out[4] != 205 || out[8] != 100 || out[9] != 100 || out[10] != 200 || out[11] != 200 {
		t.Fatalf("scaled %v", out)
	}
	if _, err := s.Scale(src[1:]); err == nil {
		t.Fatal("a short frame scaled")
	}
	for _, bad := range [][4]int{{8, 4, 7, 4}, {8, 4, 10, 4}, {8, 4, 0, 2}} {
		if err := s.Resize(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// At 3/4 the boxes fall on whole pixels: columns 0 | 1 | 2-3 for every 4 source columns.
func TestScaleThreeQuarters(t *testing.T) {
	s, err := NewScaler(8, 8, 6, 6)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 8*8*3/2)
	for y := range 8 {
		for x := range 8 {
			src[y*8+x] = byte(20 * x)
		}
	}
	out, _ := s.Scale(src)
	want := []byte{0, 20, 50, 80, 100, 130}
	for x, w := range want {
		if out[x] != w {
			t.Fatalf("row 0: %v, want %v", out[:6], want)
		}
	}
}

// A 720p noise frame shrinks to each rung of the ladder with no allocation per frame.
func TestScaleAllocs(t *testing.T) {
	gen, _ := NewNoise(1280, 720, 1, 0)
	frame := gen.Next()
	s, _ := NewScaler(1280, 720, 960, 540)
	for _, size := range [][2]int{{960, 540}, {640, 360}, {480, 270}, {320, 180}} {
		if err := s.Resize(1280, 720, size[0], size[1]); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(3, func() { _, _ = s.Scale(frame) }); n != 0 {
			t.Fatalf("%dx%d: %v allocations per frame", size[0], size[1], n)
		}
	}
}

func BenchmarkScale720pTo540p(b *testing.B) {
	gen, _ := NewNoise(1280, 720, 1, 0)
	frame := gen.Next()
	s, _ := NewScaler(1280, 720, 960, 540)
	for b.Loop() {
		_, _ = s.Scale(frame)
	}
}
