package flows

import (
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
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
func newBenchSender(tb testing.TB, ccName string) (*mediaSender, *sinkWriter) {
	tb.Helper()
	clock := runClock{time.Now()}
	h := &nsHost{}
	spec := mediaSpec("bench", ccName, time.Hour)
	spec.Codec.MinRate = 2e6 // several packets per frame, without feedback raising the target
	f, err := NewMedia(endpoint.Env{Spec: spec, Src: h, Dst: h, Rec: nopRecorder{}, Clock: clock})
	if err != nil {
		tb.Fatal(err)
	}
	m := f.(*Media)
	est := bwe.NewSendSide(m.ctl.Rate, time.Hour)
	tb.Cleanup(func() { _ = est.Close() })
	sink := &sinkWriter{buf: make([]byte, 1500)}
	s := newMediaSender(m, sink, est.Estimator(), 3)
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

// The encoder, packetiser and pacer allocate nothing per packet (nor per frame) once running.
func TestMediaSenderAllocs(t *testing.T) {
	for _, ccName := range []string{"gcc", "nada", "gcc-draft"} {
		s, sink := newBenchSender(t, ccName)
		now := time.Now()
		for range 100 { // warm up: the controller's and the queue's buffers reach their size
			now = now.Add(33 * time.Millisecond)
			s.benchFrame(now)
		}
		before := sink.packets
		allocs := testing.AllocsPerRun(200, func() {
			now = now.Add(33 * time.Millisecond)
			s.benchFrame(now)
		})
		if sink.packets == before {
			t.Fatalf("%s: no packets sent", ccName)
		}
		if allocs > 0 {
			t.Errorf("%s: %.1f allocations per frame (%d packets), want 0", ccName, allocs, (sink.packets-before)/201)
		}
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
