package browser

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

// writeNoiseY4M writes a y4m of frames of uniform random noise, each frame drawn afresh, so that
// neither intra nor inter prediction (nor a golden frame from a frame ago) saves a bit: the
// encoder spends whatever rate GCC gives it, as the simulator's codec models do. Chromium loops
// the file; one loop lasts loop seconds. The generator is seeded, so the content is the same in
// every run.
func writeNoiseY4M(path string, width, height int, fps float64, loop float64, seed uint64) error {
	width, height = width&^1, height&^1 // 4:2:0 needs even sizes
	frames := max(1, int(math.Round(fps*loop)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	num, den := frameRate(fps)
	fmt.Fprintf(w, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 C420jpeg\n", width, height, num, den)
	rng := rand.New(rand.NewPCG(seed, 0x79346d))
	frame := make([]byte, width*height*3/2)
	for range frames {
		for i := 0; i+8 <= len(frame); i += 8 {
			v := rng.Uint64()
			for j := range 8 {
				frame[i+j] = byte(v >> (8 * j))
			}
		}
		_, _ = w.WriteString("FRAME\n")
		_, _ = w.Write(frame)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// frameRate is fps as the y4m header's ratio (29.97 → 30000:1001 style, to a thousandth).
func frameRate(fps float64) (num, den int) {
	if fps == math.Trunc(fps) {
		return int(fps), 1
	}
	return int(math.Round(fps * 1000)), 1000
}
