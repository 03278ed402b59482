package peer

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"
)

// TestReceiverReportsEchoSenderReports checks that strata's receiver reports about a stream it
// receives carry the LSR of the sender reports the sender sent (and so give it a round-trip time),
// with an OnTrack handler that reads only the track, as the plugins' do.
func TestReceiverReportsEchoSenderReports(t *testing.T) {
	f := newTestFactory(t, testMedia())
	rec := newRecorder()
	srv := newTestPeer(t, f, rec.hooks())
	srv.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go drain(tr) })
	c := newClient(t)
	video, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "v", "c")
	if err != nil {
		t.Fatal(err)
	}
	sender, err := c.pc.AddTrack(video)
	if err != nil {
		t.Fatal(err)
	}
	connect(t, srv, rec, c)
	ssrc := uint32(sender.GetParameters().Encodings[0].SSRC)

	lsr := make(chan uint32, 64)
	go func() {
		for {
			pkts, _, err := sender.ReadRTCP()
			if err != nil {
				return
			}
			for _, p := range pkts {
				if rr, ok := p.(*rtcp.ReceiverReport); ok {
					for _, b := range rr.Reports {
						if b.SSRC == ssrc {
							lsr <- b.LastSenderReport
						}
					}
				}
			}
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	// Pion's sender reports go out every second once the stream has packets; strata reports every
	// second too.
	go sendRTP(video, 96, 10000, 10*time.Millisecond, stop)
	deadline := time.After(8 * time.Second)
	reports := 0
	for {
		select {
		case v := <-lsr:
			reports++
			if v != 0 {
				return
			}
		case <-deadline:
			t.Fatalf("%d receiver reports about the stream in 8 s, none with the LSR of a sender report", reports)
		}
	}
}
