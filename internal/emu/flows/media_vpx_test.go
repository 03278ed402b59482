package flows

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

func vpxSpec(stop time.Duration) scenario.Flow {
	spec := mediaSpec("vpx", "gcc", stop)
	spec.Codec.Model, spec.Codec.Width, spec.Codec.Height = sim.ModelLibvpx, 640, 360
	return spec
}

// A GCC flow whose frames come from libvpx encoding the noise video fills most of a 1.5 Mbit/s
// link within 8 s, with real encoded frames at nearly the full frame rate.
func TestMediaLibvpxFillsLink(t *testing.T) {
	const dur, rate = 8 * time.Second, 1.5e6
	src, dst := newPair(t, rate, 25*time.Millisecond, 50)
	rec, m := runMedia(t, src, dst, vpxSpec(dur))
	good := rec.Rate(4*time.Second, dur)
	tgt, nt := emutest.Mean(rec.Targets(), 4*time.Second, dur)
	v := m.send.vpx
	t.Logf("4–8 s: goodput %.0f kbit/s, mean target %.0f kbit/s (%d samples); %d frames queued, %d dropped by "+
		"the rate control, %d captures lost to a busy encoder", good/1e3, tgt/1e3, nt, v.queued, v.dropped, v.busy)
	if good < 0.5*rate {
		t.Errorf("goodput over the last 4 s is %.0f kbit/s, want at least half the 1.5 Mbit/s link", good/1e3)
	}
	if frames := 8 * 30; v.queued < frames/2 {
		t.Errorf("%d encoded frames in 8 s at 30 fps", v.queued)
	}
}

func TestMediaLibvpxBadSpec(t *testing.T) {
	var h endpoint.Host = emutest.NoHost{}
	rec := emutest.NewRecorder()
	for _, c := range []struct {
		name string
		edit func(*scenario.Flow)
		want string
	}{
		{"layers", func(f *scenario.Flow) { f.Codec.Layers = []float64{300e3, 1e6} }, "single-layer"},
		{"odd size", func(f *scenario.Flow) { f.Codec.Width = 641 }, "even width"},
		{"no size", func(f *scenario.Flow) { f.Codec.Width, f.Codec.Height = 0, 0 }, "even width"},
		{"content", func(f *scenario.Flow) { f.Codec.Content = "camera" }, "unknown content"},
	} {
		spec := vpxSpec(time.Second)
		c.edit(&spec)
		_, err := NewMedia(endpoint.Env{Spec: spec, Src: h, Dst: h, Rec: rec, Clock: rec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// encodeVirtual drives a libvpx source's encoder goroutine body directly with captures at the
// codec's frame rate on a virtual clock (the adaptation takes times as arguments), at rate.
func encodeVirtual(t *testing.T, codec sim.CodecConfig, rate float64, dur time.Duration) (*vpxSource, string) {
	t.Helper()
	var log strings.Builder
	spec := vpxSpec(dur)
	spec.Codec = codec
	v, err := newVPXSource(&Media{env: endpoint.Env{Seed: 1, Log: &log}, spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	defer v.enc.Close()
	frames := int(dur.Seconds() * codec.FPS)
	for i := range frames {
		at := time.Duration(float64(i) / codec.FPS * float64(time.Second))
		if _, err := v.encode(vpxCapture{at: at, link: rate, rate: rate}, int64(i)*v.tick); err != nil {
			t.Fatal(err)
		}
	}
	v.report()
	return v, log.String()
}

// Starved of rate, an adapting libvpx source steps down at the quality scaler's 2 s and 7 s
// checks, logs each change and its last size, and encodes the smaller frames; with adapt: false
// it keeps its size.
func TestMediaLibvpxAdapts(t *testing.T) {
	codec := vpxSpec(0).Codec
	v, log := encodeVirtual(t, codec, 40e3, 8*time.Second)
	t.Log(log)
	for _, want := range []string{"resolution 640x360 → 480x270 at 2.0 s (", "resolution 480x270 → 320x180 at 7.0 s (",
		"last 320x180 after 2 resolution changes"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if w, h := v.enc.Size(); w != 320 || h != 180 {
		t.Errorf("encoder at %dx%d", w, h)
	}
	off := false
	codec.Adapt = &off
	v, log = encodeVirtual(t, codec, 40e3, 3*time.Second)
	if w, h := v.enc.Size(); w != 640 || h != 360 || strings.Contains(log, "resolution") || v.adapt != nil {
		t.Errorf("adapt: false: encoder at %dx%d, log %q", w, h, log)
	}
}
