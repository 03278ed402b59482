package peer

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/udpbatch"
)

// With batch_writes on the UDP mux, what strata sends between Hold and Release leaves through
// sendmmsg and still reaches the client as valid SRTP; without the mux there is nothing to batch.
func TestBatchedWritesOnTheUDPMuxReachTheClient(t *testing.T) {
	if b := newTestFactory(t, testMedia()).Batcher(); b != udpbatch.None {
		t.Fatalf("Batcher without a UDP mux = %T, want udpbatch.None", b)
	}
	m := testMedia()
	m.ICE.UDPMuxPort = freeUDPPort(t)
	m.ICE.BatchWrites = true
	f := newTestFactory(t, m)
	batcher, ok := f.Batcher().(*udpbatch.Net)
	if !ok {
		t.Fatalf("Batcher = %T, want *udpbatch.Net", f.Batcher())
	}
	rec := newRecorder()
	srv, err := f.New(rec.hooks(), WithSendOnly(), WithoutNACKResponder())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close("test over") })
	if srv.Batcher() != f.Batcher() {
		t.Fatal("the Peer does not carry its factory's batcher")
	}
	c := newClient(t)
	if _, err := c.pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	var received atomic.Int64
	c.pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			received.Add(1)
		}
	})
	track, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "video", "strata")
	if err != nil {
		t.Fatal(err)
	}
	addTrack := BeforeLocal(func(pc *webrtc.PeerConnection) error {
		s, err := pc.AddTrack(track)
		if err == nil {
			go drainRTCP(s)
		}
		return err
	})
	connect(t, srv, rec, c, addTrack)

	before := batcher.Stats()
	const bursts, perBurst = 50, 4
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, SSRC: 1, Timestamp: 0}, Payload: make([]byte, 500)}
	for i := range bursts {
		batcher.Hold()
		for range perBurst {
			pkt.SequenceNumber++
			if err := track.WriteRTP(pkt); err != nil {
				t.Fatal(err)
			}
		}
		batcher.Release()
		pkt.Timestamp += 3000
		if i%10 == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for received.Load() < bursts*perBurst && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := received.Load(); n < bursts*perBurst*9/10 {
		t.Fatalf("client received %d of %d packets", n, bursts*perBurst)
	}
	s := batcher.Stats()
	if batched := s.Batched - before.Batched; batched < bursts*perBurst {
		t.Errorf("%d packets went through sendmmsg, want at least %d (stats %+v)", batched, bursts*perBurst, s)
	}
	if s.Calls-before.Calls > bursts+5 { // one call per burst, plus RTCP that fell into a hold
		t.Errorf("%d sendmmsg calls for %d bursts", s.Calls-before.Calls, bursts)
	}
	// A send-only peer has no Pion statistics: handle_info counts come from strata's counters.
	for _, m := range srv.Info().Media {
		if m.Type == "video" && m.Out.Packets < bursts*perBurst {
			t.Errorf("send-only peer's outbound count %d, want %d", m.Out.Packets, bursts*perBurst)
		}
	}
}
