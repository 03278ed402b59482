package flows

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strata-rtc/strata/internal/encadapt"
	"github.com/strata-rtc/strata/internal/sim"
	"github.com/strata-rtc/strata/internal/videogen"
	"github.com/strata-rtc/strata/internal/vp8enc"
)

// vpxSource is codec model libvpx: a camera capturing the lab's noise video at the codec's frame
// rate and a real VP8 encoder configured as libwebrtc's, so that strata's sender encodes what
// Chromium's browser flows encode. Encoding a 720p frame takes milliseconds, so it runs in its
// own goroutine (run) and the pacer loop only hands it captures and takes back encoded frames.
// With adaptation (the default, as in Chromium) libwebrtc's encoder adaptation runs around the
// encoder (internal/encadapt): the capture is scaled down to the resolution the quality scaler
// chose, the encoder reopened at each new size, and its target divided by its measured overshoot.
type vpxSource struct {
	enc      *vp8enc.Encoder
	gen      *videogen.Noise
	adapt    *encadapt.Adapter // nil: a fixed size and the controller's target as is
	scaler   *videogen.Scaler
	codec    sim.CodecConfig
	captures chan vpxCapture
	frames   chan vpxFrame
	tick     int64 // a frame's duration in 90 kHz ticks

	busy    int // captures lost because the encoder was still busy (the sender's goroutine)
	queued  int // encoded frames the sender queued (the sender's goroutine)
	dropped int // frames the rate control dropped (run's goroutine)
	small   int // frames dropped before encoding for their size (run's goroutine)
	changes int // resolution changes (run's goroutine)
	log     io.Writer
	name    string
}

// vpxCapture is one captured frame's time (the run's clock), encoding target (payload bit/s) as
// the controller gave it and after the codec's limits, and RTP timestamp.
type vpxCapture struct {
	at         time.Duration
	link, rate float64
	ts         uint32
}

// vpxFrame is one encoded frame for the packetiser: its size and its capture's RTP timestamp.
type vpxFrame struct {
	size int
	ts   uint32
}

// vpxStartRate is the encoder's start target, GCC's start rate; every capture then sets the
// controller's.
const vpxStartRate = 300e3

// vpxMinRate is libwebrtc's default minimum video bitrate (kDefaultMinVideoBitrateBps), which the
// bitrate adjuster does not go under.
const vpxMinRate = 30e3

// newVPXSource opens the encoder at the start rate and, with adaptation, the adapter and the
// capture's scaler.
func newVPXSource(m *Media) (*vpxSource, error) {
	c := m.spec.Codec
	gen, err := videogen.NewNoise(c.Width, c.Height, m.env.Seed, int(c.FPS*videogen.NoiseLoop+0.5))
	if err != nil {
		return nil, err
	}
	enc, err := vp8enc.New(c.Width, c.Height, c.FPS, vpxStartRate)
	if err != nil {
		return nil, err
	}
	var adapt *encadapt.Adapter
	var scaler *videogen.Scaler
	if c.Adapts() {
		adapt = encadapt.New(encadapt.Config{Width: c.Width, Height: c.Height, FPS: c.FPS,
			StartRate: vpxStartRate, MinRate: vpxMinRate, Scale: true, Adjust: true})
		if scaler, err = videogen.NewScaler(c.Width, c.Height, c.Width, c.Height); err != nil {
			enc.Close()
			return nil, err
		}
	}
	return &vpxSource{enc: enc, gen: gen, adapt: adapt, scaler: scaler, codec: c, tick: int64(90000/c.FPS + 0.5),
		// One capture may wait while a frame encodes, as a capturer's one-frame queue; a few
		// encoded frames may wait for the pacer loop.
		captures: make(chan vpxCapture, 1), frames: make(chan vpxFrame, 4),
		log: m.env.Log, name: m.spec.Name}, nil
}

// capture hands the encoder the next frame to encode at rate, unless it is still busy with the
// one before (then the frame is lost, as a real capture pipeline loses it).
func (v *vpxSource) capture(at time.Duration, rate float64, ts uint32) {
	link := rate
	if v.codec.MinRate > 0 {
		rate = max(rate, v.codec.MinRate)
	}
	if v.codec.MaxRate > 0 {
		rate = min(rate, v.codec.MaxRate)
	}
	select {
	case v.captures <- vpxCapture{at: at, link: link, rate: max(rate, 1000), ts: ts}:
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
			continue
		}
		select {
		case v.frames <- vpxFrame{size: size, ts: c.ts}:
		case <-ctx.Done():
			return
		}
	}
}

// encode encodes the next frame of the video for capture c, at the adapted resolution and rate
// when the source adapts; it returns the encoded size (0: the frame was dropped, by the rate
// control or for its size).
func (v *vpxSource) encode(c vpxCapture, pts int64) (int, error) {
	frame, rate := v.gen.Next(), c.rate
	if v.adapt != nil {
		f := v.adapt.OnFrame(c.at, c.rate, max(c.link, c.rate))
		if f.Drop {
			v.small++
			return 0, nil
		}
		if f.Resized {
			if err := v.resize(c.at, f); err != nil {
				return 0, err
			}
		}
		var err error
		if frame, err = v.scaler.Scale(frame); err != nil {
			return 0, err
		}
		rate = f.Rate
	}
	if err := v.enc.SetBitrate(rate); err != nil {
		return 0, err
	}
	data, _, err := v.enc.Encode(frame, pts)
	if err != nil {
		return 0, err
	}
	if len(data) == 0 {
		v.dropped++
		if v.adapt != nil {
			v.adapt.OnDropped()
		}
		return 0, nil
	}
	if v.adapt != nil {
		v.adapt.OnEncoded(c.at, len(data), v.enc.LastQP())
	}
	return len(data), nil
}

// resize reopens the encoder and resizes the scaler for the adapter's new resolution, and logs it
// (as Chromium's stats give the frame size the encoder sends).
func (v *vpxSource) resize(at time.Duration, f encadapt.Frame) error {
	w, h := v.enc.Size()
	if err := v.enc.Resize(f.Width, f.Height); err != nil {
		return err
	}
	if err := v.scaler.Resize(v.codec.Width, v.codec.Height, f.Width, f.Height); err != nil {
		return err
	}
	v.changes++
	why := f.Reason
	if f.QP >= 0 {
		why = fmt.Sprintf("%s, smoothed qp %d", f.Reason, f.QP)
	}
	v.logf("media flow %s: resolution %dx%d → %dx%d at %.1f s (%s)\n", v.name, w, h, f.Width, f.Height, at.Seconds(), why)
	return nil
}

func (v *vpxSource) report() {
	if v.dropped > 0 {
		v.logf("media flow %s: libvpx's rate control dropped %d frames\n", v.name, v.dropped)
	}
	if v.adapt == nil {
		return
	}
	w, h := v.enc.Size()
	high, low := v.adapt.QP()
	v.logf("media flow %s: last %dx%d after %d resolution changes; %d frames dropped for their size before encoding; "+
		"smoothed qp %d (high test) and %d (low test); bitrate adjuster's last factor %.2f\n",
		v.name, w, h, v.changes, v.small, high, low, v.adapt.Factor())
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
