package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPerfectCodecExactRate(t *testing.T) {
	e := newEncoder(DefaultCodecConfig(), NewRNG(1, "c"))
	size, iv := e.frame(0, 1.2e6)
	if size != 5000 || iv != time.Second/30 {
		t.Fatalf("frame %d bytes every %v", size, iv)
	}
}

// run drives an encoder for d at a fixed target and returns the mean rate
// and the frame sizes.
func runEncoder(e *encoder, target float64, d time.Duration) (float64, []int) {
	var now time.Duration
	bytes := 0
	var sizes []int
	for now < d {
		size, iv := e.frame(now, target)
		bytes += size
		sizes = append(sizes, size)
		now += iv
	}
	return float64(bytes) * 8 / now.Seconds(), sizes
}

func TestStatisticalCodecMeanRateAndNoise(t *testing.T) {
	cfg := DefaultCodecConfig()
	cfg.Model = "statistical"
	e := newEncoder(cfg, NewRNG(1, "c"))
	rate, sizes := runEncoder(e, 1e6, 200*time.Second)
	if math.Abs(rate-1e6) > 0.03e6 {
		t.Fatalf("mean rate %v, want ~1 Mbit/s", rate)
	}
	if sizes[0] != cfg.BurstSize {
		t.Fatalf("first frame %d bytes, want the I-frame %d", sizes[0], cfg.BurstSize)
	}
	// Steady-state frames vary: the Laplacian noise has scale 0.15, so the
	// mean absolute deviation is ~15% of the nominal 4167 bytes.
	dev := 0.0
	steady := sizes[cfg.BurstFrames:]
	for _, s := range steady {
		dev += math.Abs(float64(s) - 1e6/8/30)
	}
	if mad := dev / float64(len(steady)) / (1e6 / 8 / 30); mad < 0.10 || mad > 0.20 {
		t.Fatalf("mean absolute deviation %v, want ~0.15", mad)
	}
}

func TestStatisticalCodecTransientOnBigChange(t *testing.T) {
	cfg := DefaultCodecConfig()
	cfg.Model, cfg.ScaleSize, cfg.ScaleInterval = "statistical", 0, 0
	e := newEncoder(cfg, NewRNG(1, "c"))
	var now time.Duration
	for i := 0; i < 30; i++ { // one second at 300 kbit/s
		_, iv := e.frame(now, 3e5)
		now += iv
	}
	// A doubling is more than the 50% threshold: the next frame is an I-frame.
	size, _ := e.frame(now, 6e5)
	if size != cfg.BurstSize {
		t.Fatalf("frame after a big change is %d bytes, want %d", size, cfg.BurstSize)
	}
	// A 10% change within tau is not adopted at all.
	now += 10 * time.Millisecond
	size, _ = e.frame(now, 6.6e5)
	if e.rate != 6e5 {
		t.Fatalf("rate adopted within tau: %v (frame %d)", e.rate, size)
	}
}

func TestActiveLayers(t *testing.T) {
	layers := []float64{150e3, 500e3, 1.5e6}
	for _, c := range []struct {
		target float64
		want   int
	}{{50e3, 1}, {649e3, 1}, {650e3, 2}, {2.15e6, 3}, {10e6, 3}} {
		if got := activeLayers(layers, c.target); got != c.want {
			t.Errorf("target %v: %d layers, want %d", c.target, got, c.want)
		}
	}
}

// Model libvpx takes a frame size and content and no layers; the simulator refuses to run it
// (it is a real encoder) rather than substitute another model.
func TestLibvpxCodecConfig(t *testing.T) {
	c := DefaultCodecConfig()
	c.Model, c.Width, c.Height = ModelLibvpx, 1280, 720
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Content = ContentNoise
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*CodecConfig){
		"odd width":     func(c *CodecConfig) { c.Width = 1281 },
		"no size":       func(c *CodecConfig) { c.Width, c.Height = 0, 0 },
		"huge":          func(c *CodecConfig) { c.Height = 8192 },
		"content":       func(c *CodecConfig) { c.Content = "camera" },
		"layers":        func(c *CodecConfig) { c.Layers = []float64{1e6, 2e6} },
		"size on model": func(c *CodecConfig) { c.Model = "statistical" },
	} {
		bad := c
		edit(&bad)
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	s, fwd, rev := duplex(t, 1, time.Second, LinkConfig{Rate: ConstantRate(1e6)})
	_, err := NewMediaFlow(s, MediaConfig{Name: "v", Forward: fwd, Reverse: rev, Stop: time.Second,
		Codec: c, Controller: &constRate{target: 1e6}})
	want := "codec model libvpx needs the emulation engine (strata lab run --engine emu)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("the simulator ran model libvpx: error %v, want %q", err, want)
	}
}
