package browser

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

// writeNoiseY4M writes a y4m of a moving gradient under fresh random noise (see the loop), so
// that motion compensation saves little and the quantiser alone sets the rate: the encoder
// meets whatever rate GCC gives it at full frame rate, as the simulator's codec models do
// (Chromium's own fake camera is so easy to encode that it stays near 1 Mbit/s at 720p30, and
// pure full-range noise makes the encoder drop most frames at low rates). Chromium loops the
// file; one loop lasts loop seconds. The generator is seeded: the same content in every run.
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
	luma, chroma := frame[:width*height], frame[width*height:]
	for n := range frames {
		// A gradient that moves every frame, under fresh noise: at a high quantiser the noise
		// costs nothing, at a low one a great deal, so the encoder can meet any target from
		// tens of kbit/s to several Mbit/s by its quantiser alone, without dropping frames.
		for y := range height {
			row := luma[y*width : (y+1)*width]
			for x := range row {
				g := (x + y + 4*n) & 63
				row[x] = byte(96 + g + int(rng.Uint32()%(2*noiseAmplitude+1)) - noiseAmplitude)
			}
		}
		for i := range chroma {
			chroma[i] = byte(128 + int(rng.Uint32()%(noiseAmplitude+1)) - noiseAmplitude/2)
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

// noiseAmplitude is the luma noise's half-range (chroma's is half of it).
const noiseAmplitude = 16

// frameRate is fps as the y4m header's ratio (29.97 → 30000:1001 style, to a thousandth).
func frameRate(fps float64) (num, den int) {
	if fps == math.Trunc(fps) {
		return int(fps), 1
	}
	return int(math.Round(fps * 1000)), 1000
}
