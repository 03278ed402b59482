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
