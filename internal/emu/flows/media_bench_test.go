package flows

import (
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/sim"
)

// sinkWriter stands in for the Pion track: it marshals each packet into one buffer, as SRTP would
// read it.
type sinkWriter struct {
	buf     []byte
	packets int
}

func (w *sinkWriter) WriteRTP(p *rtp.Packet) error {
	_, err := p.MarshalTo(w.buf)
	w.packets++
	return err
}

type nopRecorder struct{}

func (nopRecorder) Goodput(int)       {}
func (nopRecorder) Target(float64)    {}
func (nopRecorder) Cwnd(float64)      {}
func (nopRecorder) RTT(time.Duration) {}

// newBenchSender is a sender for ccName writing to a sink, outside any network.
// layers, when set, makes the source layered; otherwise the codec's minimum rate is 2 Mbit/s, for
// several packets per frame without feedback raising the target.
func newBenchSender(tb testing.TB, ccName string, layers ...float64) (*mediaSender, *sinkWriter) {
	tb.Helper()
	clock := emutest.Clock{T0: time.Now()}
	var h endpoint.Host = emutest.NoHost{}
	spec := mediaSpec("bench", ccName, time.Hour)
	spec.Codec.MinRate, spec.Codec.Layers = 2e6, layers
	if len(layers) > 0 {
		spec.Codec.MinRate = 0
	}
	f, err := NewMedia(endpoint.Env{Spec: spec, Src: h, Dst: h, Rec: nopRecorder{}, Clock: clock})
	if err != nil {
		tb.Fatal(err)
	}
	m := f.(*Media)
	est := bwe.NewSendSide(m.ctl.Rate, time.Hour)
	tb.Cleanup(func() { _ = est.Close() })
	sink := &sinkWriter{buf: make([]byte, 1500)}
	s, err := newMediaSender(m, sink, est.Estimator(), 3)
	if err != nil {
		tb.Fatal(err)
	}
	s.start = time.Now()
	s.nextFrame, s.nextSend = s.start, s.start
	return s, sink
}

// frame runs one frame through the encoder, the packetiser and the pacer, with the pacer's clock
// advanced so that every queued packet (and probe) goes out.
func (s *mediaSender) benchFrame(now time.Time) {
	s.onFrame(now)
	for s.pending() {
		s.sendOne(now)
		s.nextSend = now
	}
}

func BenchmarkMediaSender(b *testing.B) {
	s, sink := newBenchSender(b, "gcc")
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now = now.Add(33 * time.Millisecond)
		s.benchFrame(now)
	}
	b.ReportMetric(float64(sink.packets)/float64(b.N), "packets/frame")
}

// A layered source sends the layers that fit in the target, as the simulator's does, and a paused
// flow encodes nothing.
func TestMediaSenderLayersAndPauses(t *testing.T) {
	s, _ := newBenchSender(t, "gcc", 150e3, 500e3, 1500e3)
	now := time.Now()
	frame := func() {
		now = now.Add(33 * time.Millisecond)
		s.onFrame(now)
		s.queue = packetQueue{}
		s.queue.init(16)
		s.probeLeft = 0
	}
	frame() // gcc starts at 300 kbit/s: only the base layer fits
	if s.layersOn != 1 {
		t.Errorf("target %.0f: %d layers on, want 1", s.target, s.layersOn)
	}
	s.target = 700e3 // as the controller would say next: base and middle fit
	s.encode(0, 0)
	if s.layersOn != 2 {
		t.Errorf("target 700 kbit/s: %d layers on, want 2", s.layersOn)
	}
	s.m.spec.Pauses = []sim.Interval{{From: 0, To: time.Hour}}
	s.queue = packetQueue{}
	s.queue.init(16)
	for range 10 {
		now = now.Add(33 * time.Millisecond)
		s.onFrame(now)
	}
	if s.queue.len() != 0 {
		t.Errorf("paused flow queued %d packets", s.queue.len())
	}
	s.m.spec.Pauses = nil
	s.onFrame(now.Add(33 * time.Millisecond))
	if s.queue.len() == 0 {
		t.Error("resumed flow queued nothing")
	}
}
