package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// CodecConfig describes a synthetic video encoder.
//
// Model "perfect" emits frames of exactly rate/fps at exactly 1/fps.
//
// Model "statistical" follows the statistical model of RFC 8593 section 5:
// the encoder adopts a new target at most once per Tau; in steady state the
// frame size and the frame interval deviate from their nominal values
// (rate/fps and 1/fps) by zero-mean Laplacian noise with scales ScaleSize and
// ScaleInterval; when the adopted rate changes by more than ChangeThreshold
// (relative), at the start, and every KeyframeInterval, the encoder enters a
// transient of BurstFrames frames whose first frame is an I-frame of
// BurstSize bytes and whose remaining frames shrink so that the transient as
// a whole stays near the target rate.
//
// Model "libvpx" is a real VP8 encoder (internal/vp8enc, configured as
// libwebrtc configures it) fed Width × Height frames of generated Content
// ("noise", internal/videogen, the content Chromium's browser flows send):
// only the emulation engine's media sender runs it, and it is single-layer. Adapt (default on)
// runs libwebrtc's encoder adaptation around it (internal/encadapt: resolution scaling on QP and
// frame drops, and the bitrate adjuster), as Chromium does; false keeps the size and the target.
type CodecConfig struct {
	Model            string // "perfect" (default), "statistical" or "libvpx"
	FPS              float64
	Tau              time.Duration
	BurstFrames      int
	BurstSize        int
	ScaleSize        float64
	ScaleInterval    float64
	ChangeThreshold  float64
	KeyframeInterval time.Duration
	MinRate, MaxRate float64 // encoder's supported range; 0 = unbounded
	// Layers, when set, makes the source layered (simulcast or SVC): each
	// entry is one layer's own rate, layers are sent cumulatively from the
	// lowest, and the source sends as many as fit in the target (always the
	// first).
	Layers []float64
	// Width, Height and Content are model libvpx's frames.
	Width, Height int
	Content       string
	Adapt         *bool // nil: the model's default (libvpx: on)
}

// Adapts says whether the encoder adapts as libwebrtc's does (model libvpx only; default on).
func (c CodecConfig) Adapts() bool { return c.Model == ModelLibvpx && (c.Adapt == nil || *c.Adapt) }

// Codec model names.
const (
	ModelLibvpx  = "libvpx"
	ContentNoise = "noise" // the only generated content, and libvpx's default
)

// DefaultCodecConfig returns a perfect 30 fps codec; the statistical
// parameters are RFC 8593's example values (tau 0.2 s, 8 transient frames,
// 13.5 KB I-frame, Laplacian scale 0.15).
func DefaultCodecConfig() CodecConfig {
	return CodecConfig{Model: "perfect", FPS: 30, Tau: 200 * time.Millisecond, BurstFrames: 8,
		BurstSize: 13500, ScaleSize: 0.15, ScaleInterval: 0.15, ChangeThreshold: 0.5}
}

// Validate checks the codec parameters.
func (c CodecConfig) Validate() error {
	switch c.Model {
	case "perfect", "statistical":
		if c.Width != 0 || c.Height != 0 || c.Content != "" || c.Adapt != nil {
			return fmt.Errorf("width, height, content and adapt belong to codec model libvpx, not %s", c.Model)
		}
	case ModelLibvpx:
		if err := c.validateLibvpx(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown codec model %q (want perfect, statistical or libvpx)", c.Model)
	}
	if c.FPS <= 0 || c.FPS > 1000 {
		return fmt.Errorf("fps %v out of range", c.FPS)
	}
	if c.Model == "statistical" && (c.BurstFrames < 1 || c.BurstSize < 0 || c.ScaleSize < 0 || c.ScaleInterval < 0) {
		return fmt.Errorf("statistical codec parameters must be positive")
	}
	for _, r := range c.Layers {
		if r <= 0 {
			return fmt.Errorf("layer rate must be positive")
		}
	}
	return nil
}

func (c CodecConfig) validateLibvpx() error {
	if c.Width < 16 || c.Height < 16 || c.Width > 4096 || c.Height > 4096 || c.Width%2 != 0 || c.Height%2 != 0 {
		return fmt.Errorf("codec model libvpx needs an even width and height between 16 and 4096 (got %dx%d)", c.Width, c.Height)
	}
	if c.Content != "" && c.Content != ContentNoise {
		return fmt.Errorf("codec model libvpx: unknown content %q (noise)", c.Content)
	}
	if len(c.Layers) > 0 {
		return fmt.Errorf("codec model libvpx is single-layer: drop layers")
	}
	return nil
}

// ErrLibvpxNeedsEmulation is what the simulator says about codec model libvpx.
var ErrLibvpxNeedsEmulation = errors.New("codec model libvpx needs the emulation engine (strata lab run --engine emu)")

// Simulated says whether the simulator can run the codec: model libvpx is a
// real encoder, which only the emulation engine runs (in real time).
func (c CodecConfig) Simulated() error {
	if c.Model == ModelLibvpx {
		return ErrLibvpxNeedsEmulation
	}
	return nil
}

// encoder turns a target rate into frame sizes and intervals.
type encoder struct {
	cfg        CodecConfig
	rng        *rand.Rand
	rate       float64 // adopted rate (bit/s)
	adoptedAt  time.Duration
	started    bool
	burstLeft  int
	nextKey    time.Duration
	frameCount int64
}

func newEncoder(cfg CodecConfig, rng *rand.Rand) *encoder { return &encoder{cfg: cfg, rng: rng} }

func (e *encoder) clamp(r float64) float64 {
	if e.cfg.MinRate > 0 && r < e.cfg.MinRate {
		r = e.cfg.MinRate
	}
	if e.cfg.MaxRate > 0 && r > e.cfg.MaxRate {
		r = e.cfg.MaxRate
	}
	return r
}

// keyframe forces an I-frame at the next frame.
func (e *encoder) keyframe() { e.burstLeft = e.cfg.BurstFrames }

// frame returns the next frame's payload size in bytes and the time until
// the frame after it, for a target of target bit/s at time now.
func (e *encoder) frame(now time.Duration, target float64) (int, time.Duration) {
	target = e.clamp(target)
	nominal := time.Duration(float64(time.Second) / e.cfg.FPS)
	e.frameCount++
	if e.cfg.Model == "perfect" {
		e.rate = target
		return int(math.Round(target / 8 / e.cfg.FPS)), nominal
	}
	switch {
	case !e.started:
		e.started, e.rate, e.adoptedAt = true, target, now
		e.keyframe()
		if e.cfg.KeyframeInterval > 0 {
			e.nextKey = now + e.cfg.KeyframeInterval
		}
	case now-e.adoptedAt >= e.cfg.Tau && target != e.rate:
		if math.Abs(target-e.rate) > e.cfg.ChangeThreshold*e.rate {
			e.keyframe()
		}
		e.rate, e.adoptedAt = target, now
	}
	if e.cfg.KeyframeInterval > 0 && now >= e.nextKey {
		e.keyframe()
		e.nextKey = now + e.cfg.KeyframeInterval
	}
	b0 := e.rate / 8 / e.cfg.FPS
	var size float64
	switch {
	case e.burstLeft == e.cfg.BurstFrames && e.burstLeft > 0:
		size = math.Max(float64(e.cfg.BurstSize), b0)
		e.burstLeft--
	case e.burstLeft > 0:
		// The rest of the transient pays back the I-frame's excess.
		k := float64(e.cfg.BurstFrames)
		size = math.Max(0.1*b0, (k*b0-math.Max(float64(e.cfg.BurstSize), b0))/(k-1))
		e.burstLeft--
	default:
		size = b0 * math.Max(0.05, 1+laplace(e.rng, e.cfg.ScaleSize))
	}
	interval := float64(nominal) * math.Max(0.2, 1+laplace(e.rng, e.cfg.ScaleInterval))
	return int(math.Round(size)), time.Duration(interval)
}

// activeLayers returns how many layers fit in target (at least one).
func activeLayers(layers []float64, target float64) int {
	sum, n := 0.0, 0
	for _, r := range layers {
		if n > 0 && sum+r > target {
			break
		}
		sum += r
		n++
	}
	return n
}
