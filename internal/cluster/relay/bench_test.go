package relay

import (
	"context"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// signalSink tells the test that the edge's Receiver delivered a packet.
type signalSink chan struct{}

func (s signalSink) WriteRTP(*sfu.Packet) {
	select {
	case s <- struct{}{}:
	default:
	}
}
func (signalSink) Resync() {}

// linkedPair exports a one-layer VP8 feed (or an Opus one whose packets carry the audio level) on
// a and imports it on b; send writes one packet at the origin and waits until the edge's Receiver
// delivered it.
func linkedPair(tb testing.TB, transport string, audio bool) (send func()) {
	rs := newRelaysWith(tb, withTransport(transport), "a", "b")
	var origin *sfu.Receiver
	stream := Stream{}
	pkt := vp8Packet(0, 0, 0, 0, 0, true, true, true, 1000, 1000)
	if audio {
		origin = sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecOpus, Extensions: sfu.ExtIDs{AudioLevel: 5}}, nil)
		stream = Stream{Mid: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, PayloadType: 111, Layers: 1, Receiver: origin}
		pkt = append([]byte{0x90, 111, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0xBE, 0xDE, 0, 1, 5 << 4, 0x80 | 30, 0, 0}, make([]byte, 100)...)
	} else {
		origin = sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecVP8}, nil)
		stream = vp8Stream(origin, 1)
	}
	if err := rs[0].Export("feed", []Stream{stream}); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	imp, err := rs[1].Import(ctx, "a", "feed")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(imp.Release)
	arrived := make(signalSink, 1)
	imp.Receivers()["v"].AddSink(arrived)
	// Packets rewritten in place (VP8: one frame each): nothing allocated to make them.
	seq, ts := uint16(0), uint32(0)
	timeout := time.NewTimer(time.Hour) // reset per packet: time.After would allocate
	return func() {
		seq++
		ts += 3000
		pkt[2], pkt[3] = byte(seq>>8), byte(seq)
		pkt[4], pkt[5], pkt[6], pkt[7] = byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
		if !audio {
			pkt[14], pkt[15] = 0x80|byte(seq>>8&0x7f), byte(seq)
			pkt[18] = 1 // after the first, delta frames
		}
		origin.WriteRTP(0, pkt, sfu.Now())
		timeout.Reset(time.Second)
		select {
		case <-arrived:
			timeout.Stop()
		case <-timeout.C:
			tb.Fatalf("packet %d did not cross", seq)
		}
	}
}

func BenchmarkRelayPacket(b *testing.B) {
	for _, tr := range []string{"srtp", "rtp"} {
		b.Run(tr, func(b *testing.B) {
			send := linkedPair(b, tr, false)
			for range 50 {
				send()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				send()
			}
		})
	}
}
