// Package videogen generates the lab's synthetic camera content, frame by frame, so that every
// sender fed from it sees the same pictures: Chromium reads them from a y4m file (its fake
// capture device), strata's emulated sender encodes them with libvpx (internal/vp8enc).
package videogen

import (
	"fmt"
	"math/rand/v2"
)

// NoiseLoop is how many seconds of noise video the lab generates before it repeats: Chromium
// loops its y4m file, and strata's sender repeats the same frames so that both encode the same.
const NoiseLoop = 2

// noiseAmplitude is the luma noise's half-range (chroma's is half of it).
const noiseAmplitude = 16

// Noise is a moving gradient under fresh random noise, as I420 (4:2:0) frames: motion
// compensation saves little and the quantiser alone sets the rate, so an encoder meets whatever
// rate it is given at full frame rate, from tens of kbit/s to several Mbit/s (a camera-like
// scene is so easy to encode that it stays near 1 Mbit/s at 720p30, and pure full-range noise
// makes the encoder drop most frames at low rates). The generator is seeded: the same seed
// gives the same frames.
type Noise struct {
	width, height int
	seed          uint64
	loop, n       int
	rng           *rand.Rand
	frame         []byte
}

// NewNoise returns the generator for frames of width × height (rounded down to even sizes, as
// 4:2:0 needs) that repeats after loop frames (0: never).
func NewNoise(width, height int, seed uint64, loop int) (*Noise, error) {
	width, height = width&^1, height&^1
	if width < 2 || height < 2 || width > 1<<14 || height > 1<<14 {
		return nil, fmt.Errorf("noise video: size %dx%d out of range", width, height)
	}
	g := &Noise{width: width, height: height, seed: seed, loop: loop, frame: make([]byte, width*height*3/2)}
	g.restart()
	return g, nil
}

func (g *Noise) restart() {
	g.n = 0
	g.rng = rand.New(rand.NewPCG(g.seed, 0x79346d))
}

// Size is the frames' width and height.
func (g *Noise) Size() (width, height int) { return g.width, g.height }

// Next returns the next frame: the Y plane, then U, then V, each without padding. The slice is
// the generator's own and is overwritten by the next call.
func (g *Noise) Next() []byte {
	if g.loop > 0 && g.n == g.loop {
		g.restart()
	}
	w, n := g.width, g.n
	luma, chroma := g.frame[:w*g.height], g.frame[w*g.height:]
	// A gradient that moves every frame, under fresh noise: at a high quantiser the noise
	// costs nothing, at a low one a great deal.
	for y := range g.height {
		row := luma[y*w : (y+1)*w]
		for x := range row {
			grad := (x + y + 4*n) & 63
			row[x] = byte(96 + grad + int(g.rng.Uint32()%(2*noiseAmplitude+1)) - noiseAmplitude)
		}
	}
	for i := range chroma {
		chroma[i] = byte(128 + int(g.rng.Uint32()%(noiseAmplitude+1)) - noiseAmplitude/2)
	}
	g.n++
	return g.frame
}
