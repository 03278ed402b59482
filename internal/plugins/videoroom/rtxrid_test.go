package videoroom_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// uplinkLoss is a publisher's innermost interceptor: it drops every dropEvery-th video packet it
// sends, before the network, and counts the retransmissions the server's NACKs bring (over RTX,
// or as the same packet again).
type uplinkLoss struct {
	interceptor.NoOp
	dropEvery int

	mu     sync.Mutex
	sent   int
	seen   map[uint64]bool
	rtx    atomic.Int64
	resent atomic.Int64
}

func (l *uplinkLoss) NewInterceptor(string) (interceptor.Interceptor, error) { return l, nil }

func (l *uplinkLoss) BindLocalStream(info *interceptor.StreamInfo, w interceptor.RTPWriter) interceptor.RTPWriter {
	if !strings.EqualFold(info.MimeType, webrtc.MimeTypeVP8) {
		return w
	}
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		if info.SSRCRetransmission != 0 && h.SSRC == info.SSRCRetransmission {
			l.rtx.Add(1)
			return w.Write(h, payload, a)
		}
		l.mu.Lock()
		key := uint64(h.SSRC)<<16 | uint64(h.SequenceNumber)
		again := l.seen[key]
		l.seen[key] = true
		l.sent++
		drop := !again && l.sent%l.dropEvery == 0
		l.mu.Unlock()
		if again {
			l.resent.Add(1)
		}
		if drop {
			return h.MarshalSize() + len(payload), nil
		}
		return w.Write(h, payload, a)
	})
}

// TestRetransmissionsCarryingTheRIDKeepTheLayer: a Pion publisher of RID simulcast marks its packets
// with their RID, and Pion's NACK responder copies that mark onto its retransmissions over RTX.
// Such an RTX packet, on an SSRC the RID offer does not declare to Pion, looks to Pion like the
// layer's stream: Pion moved the layer's track to the RTX SSRC and fired OnTrack again, so the
// server read the layer on two goroutines (a crash) and lost its media (every subscriber froze).
// With loss on the publisher's uplink the subscriber must keep receiving the top layer, and
// the lost packets must be resent.
func TestRetransmissionsCarryingTheRIDKeepTheLayer(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	c := startServer(t, nil)
	admin := attach(t, c)
	const room = 4343
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "publishers": 2}, nil)
	loss := &uplinkLoss{dropEvery: 25, seen: map[uint64]bool{}}
	pub := startPublisherWith(t, c, room, "camera", publisherOptions{client: clientOptions{innermost: []interceptor.Factory{loss}}})
	waitActive(t, admin, room, pub.id)
	sub := subscribe(t, c, room, pub.id, nil)
	top := func(l int) bool { return l == 2 }
	if d := sub.waitFrame(time.Now(), 10*time.Second, top); d < 0 {
		t.Fatalf("the subscriber never reached the top layer (now %d)", sub.layerNow())
	}
	for i := range 6 {
		time.Sleep(time.Second)
		if d := sub.waitFrame(time.Now(), 2*time.Second, top); d < 0 {
			t.Fatalf("second %d: no top-layer frame for 2 s (now layer %d; %d retransmissions over RTX, %d resent)",
				i, sub.layerNow(), loss.rtx.Load(), loss.resent.Load())
		}
	}
	if loss.rtx.Load()+loss.resent.Load() == 0 {
		t.Fatal("no lost packet was retransmitted")
	}
	t.Logf("retransmissions: %d over RTX, %d on the media stream", loss.rtx.Load(), loss.resent.Load())
}
