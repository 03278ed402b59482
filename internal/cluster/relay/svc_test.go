package relay

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/media/mediatest"
	"github.com/strata-rtc/strata/internal/sfu"
)

// spatialSink records the spatial layers the edge's Receiver parsed.
type spatialSink struct {
	mu   sync.Mutex
	seen [3]int
}

func (s *spatialSink) WriteRTP(p *sfu.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Flags.SID >= 0 && p.Flags.SID < 3 {
		s.seen[p.Flags.SID]++
	}
}
func (s *spatialSink) Resync() {}

// Every spatial layer of an SVC stream crosses in its one stream, and the edge's Receiver sees
// the layers as the origin's does (its allocators measure them per layer).
func TestSVCStreamCrossesWithEveryLayer(t *testing.T) {
	rs := newRelays(t, "a", "b")
	origin := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecVP9}, nil)
	vp9 := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP9, ClockRate: 90000, SDPFmtpLine: "profile-id=0"}
	if err := rs[0].Export("svc", []Stream{{Mid: "v", Codec: vp9, PayloadType: 98, Layers: 1, Receiver: origin}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		seq, ts, pic, tl0 := uint16(1), uint32(0), uint16(0), uint8(0)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			tid := []uint8{0, 2, 1, 2}[pic%4]
			key := pic%30 == 0
			if key {
				tid = 0
			}
			if tid == 0 && pic > 0 {
				tl0++
			}
			for _, p := range mediatest.VP9Picture(&seq, ts, pic, tl0, tid, key) {
				origin.WriteRTP(0, p, sfu.Now())
			}
			ts += 3000
			pic = (pic + 1) & 0x7fff
		}
	}()
	imp := importFeed(t, rs[1], "a", "svc")
	edge := imp.Receivers()["v"]
	if edge.Config().Simulcast || edge.Codec() != media.CodecVP9 {
		t.Fatalf("edge receiver %+v", edge.Config())
	}
	sink := &spatialSink{}
	edge.AddSink(sink)
	eventually(t, "every spatial layer on the edge", wait, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return sink.seen[0] > 10 && sink.seen[1] > 10 && sink.seen[2] > 10
	})
	eventually(t, "the edge measuring every spatial layer", wait, func() bool {
		rates := edge.Rates(sfu.Now())
		return rates[2][0] > 0 && rates[1][0] > 0 && rates[0][0] > 0
	})
}
