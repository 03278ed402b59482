package flows

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
	"github.com/strata-rtc/strata/internal/videogen"
	"github.com/strata-rtc/strata/internal/vp8enc"
)

// vpxSource is codec model libvpx: a camera capturing the lab's noise video at the codec's frame
// rate and a real VP8 encoder configured as libwebrtc's, so that strata's sender encodes what
// Chromium's browser flows encode. Encoding a 720p frame takes milliseconds, so it runs in its
// own goroutine (run) and the pacer loop only hands it captures and takes back encoded frames.
type vpxSource struct {
	enc      *vp8enc.Encoder
	gen      *videogen.Noise
	codec    sim.CodecConfig
	captures chan vpxCapture
	frames   chan vpxFrame
	tick     int64 // a frame's duration in 90 kHz ticks

	busy    int // captures lost because the encoder was still busy (the sender's goroutine)
	queued  int // encoded frames the sender queued (the sender's goroutine)
	dropped int // frames the rate control dropped (run's goroutine)
	log     io.Writer
	name    string
}

// vpxCapture is one captured frame's encoding target (payload bit/s) and RTP timestamp.
type vpxCapture struct {
	rate float64
	ts   uint32
}

// vpxFrame is one encoded frame for the packetiser: its size and its capture's RTP timestamp.
type vpxFrame struct {
	size int
	ts   uint32
}

// newVPXSource opens the encoder at 300 kbit/s (GCC's start rate); every capture then sets the
// controller's.
func newVPXSource(m *Media) (*vpxSource, error) {
	c := m.spec.Codec
	gen, err := videogen.NewNoise(c.Width, c.Height, m.env.Seed, int(c.FPS*videogen.NoiseLoop+0.5))
	if err != nil {
		return nil, err
	}
	enc, err := vp8enc.New(c.Width, c.Height, c.FPS, 300e3)
	if err != nil {
		return nil, err
	}
	return &vpxSource{enc: enc, gen: gen, codec: c, tick: int64(90000/c.FPS + 0.5),
		// One capture may wait while a frame encodes, as a capturer's one-frame queue; a few
		// encoded frames may wait for the pacer loop.
		captures: make(chan vpxCapture, 1), frames: make(chan vpxFrame, 4),
		log: m.env.Log, name: m.spec.Name}, nil
}

// capture hands the encoder the next frame to encode at rate, unless it is still busy with the
// one before (then the frame is lost, as a real capture pipeline loses it).
func (v *vpxSource) capture(rate float64, ts uint32) {
	if v.codec.MinRate > 0 {
		rate = max(rate, v.codec.MinRate)
	}
	if v.codec.MaxRate > 0 {
		rate = min(rate, v.codec.MaxRate)
	}
	select {
	case v.captures <- vpxCapture{rate: max(rate, 1000), ts: ts}:
	default:
		v.busy++
	}
}

// run encodes the captures until ctx ends, then frees the encoder.
func (v *vpxSource) run(ctx context.Context) {
	defer v.enc.Close()
	defer v.report()
	var pts int64
	for {
		var c vpxCapture
		select {
		case <-ctx.Done():
			return
		case c = <-v.captures:
		}
		size, err := v.encode(c, pts)
		pts += v.tick
		if err != nil {
			v.logf("media flow %s: libvpx: %v: no more frames\n", v.name, err)
			return
		}
		if size == 0 {
			v.dropped++
			continue
		}
		select {
		case v.frames <- vpxFrame{size: size, ts: c.ts}:
		case <-ctx.Done():
			return
		}
	}
}

// encode sets the capture's rate and encodes the next frame of the video; it returns the encoded
// size (0: the rate control dropped the frame).
func (v *vpxSource) encode(c vpxCapture, pts int64) (int, error) {
	if err := v.enc.SetBitrate(c.rate); err != nil {
		return 0, err
	}
	data, _, err := v.enc.Encode(v.gen.Next(), pts)
	return len(data), err
}

func (v *vpxSource) report() {
	if v.dropped > 0 {
		v.logf("media flow %s: libvpx's rate control dropped %d frames\n", v.name, v.dropped)
	}
}

// reportBusy says how many captures the sender lost to a busy encoder (after the sender's loop).
func (v *vpxSource) reportBusy(elapsed time.Duration) {
	if v.busy > 0 {
		v.logf("media flow %s: %d of %.0f captures lost while libvpx was still encoding: the machine was busy\n",
			v.name, v.busy, elapsed.Seconds()*v.codec.FPS)
	}
}

func (v *vpxSource) logf(format string, args ...any) {
	if v.log != nil {
		fmt.Fprintf(v.log, format, args...)
	}
}
