package browser

import (
	"bufio"
	"fmt"
	"math"
	"os"

	"github.com/strata-rtc/strata/internal/videogen"
)

// writeNoiseY4M writes loop seconds of the lab's noise video (videogen.Noise) as a y4m, which
// Chromium's fake camera plays in a loop. The same seed gives the same frames that strata's own
// libvpx sender encodes.
func writeNoiseY4M(path string, width, height int, fps float64, loop float64, seed uint64) error {
	frames := max(1, int(math.Round(fps*loop)))
	gen, err := videogen.NewNoise(width, height, seed, frames)
	if err != nil {
		return err
	}
	width, height = gen.Size()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	num, den := frameRate(fps)
	fmt.Fprintf(w, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 C420jpeg\n", width, height, num, den)
	for range frames {
		_, _ = w.WriteString("FRAME\n")
		_, _ = w.Write(gen.Next())
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
