package bwe

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
)

// recordingController is a cc.RateController that remembers what it was given, so the test can
// check the interceptor's plumbing independently of any algorithm.
type recordingController struct {
	mu       sync.Mutex
	sent     int
	feedback int
	results  []cc.PacketResult
	ticks    int
}

func (r *recordingController) OnPacketSent(cc.SentPacket) { r.mu.Lock(); r.sent++; r.mu.Unlock() }
func (r *recordingController) OnFeedback(fb cc.Feedback) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.feedback++
	r.results = append(r.results, fb.Packets...)
}
func (r *recordingController) OnRTT(time.Duration, time.Duration) {}
func (r *recordingController) OnTick(time.Duration)               { r.mu.Lock(); r.ticks++; r.mu.Unlock() }
func (r *recordingController) TargetRate() cc.Bitrate             { return 0 }
func (r *recordingController) PacingRate() cc.Bitrate             { return 0 }
func (r *recordingController) State() cc.State                    { return cc.State{Algorithm: "recording"} }

// newAPI builds a loopback-only Pion API with f as its interceptor, negotiating the
// transport-wide sequence number extension and any further extensions given.
func newAPI(t *testing.T, f interceptor.Factory, extraExtensions ...string) *webrtc.API {
	t.Helper()
	m := &webrtc.MediaEngine{}
	if err := m.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	for _, uri := range append([]string{TransportCCURI}, extraExtensions...) {
		if err := m.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: uri}, webrtc.RTPCodecTypeVideo); err != nil {
			t.Fatal(err)
		}
	}
	ir := &interceptor.Registry{}
	ir.Add(f)
	se := webrtc.SettingEngine{}
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	return webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(ir), webrtc.WithSettingEngine(se))
}

func TestSendSideFeedsControllerFromRealTWCC(t *testing.T) {
	ctrl := &recordingController{}
	est := sendOverLoopback(t, func() cc.RateController { return ctrl }, func(e *Estimator, seq uint16) bool {
		return seq > 200 && e.FeedbackCount() > 5
	})
	if est.FeedbackCount() < 5 {
		t.Fatalf("only %d TWCC feedback packets reached the estimator", est.FeedbackCount())
	}
	ctrl.mu.Lock()
	defer ctrl.mu.Unlock()
	if ctrl.sent < 200 || len(ctrl.results) < 100 || ctrl.ticks == 0 {
		t.Fatalf("controller saw %d sends, %d results, %d ticks", ctrl.sent, len(ctrl.results), ctrl.ticks)
	}
	for i := 1; i < len(ctrl.results); i++ {
		r, prev := ctrl.results[i], ctrl.results[i-1]
		if r.Size < 1000 || r.Size > 1100 {
			t.Fatalf("result size %d is not the packet's wire size", r.Size)
		}
		if !r.Lost && !prev.Lost && r.SeqNo == prev.SeqNo+1 && r.Arrival < prev.Arrival {
			t.Fatalf("arrival times go backwards on loopback: %+v then %+v", prev, r)
		}
	}
}

// TestGCCRampsUpOverLoopback runs the real send-side GCC over a loopback PeerConnection carrying
// 1.6 Mbit/s: with no congestion its estimate must grow from the 300 kbit/s start. Without a pacer
// sending probe clusters, growth is AIMD's multiplicative increase alone (about 8 % a second).
func TestGCCRampsUpOverLoopback(t *testing.T) {
	const initial = 300_000
	est := sendOverLoopback(t, func() cc.RateController {
		return gcc.NewSender(gcc.WithInitialRate(initial))
	}, func(e *Estimator, _ uint16) bool { return e.TargetRate() > 3*initial/2 })
	if st := est.State(); est.TargetRate() <= 3*initial/2 || st.Algorithm != "gcc" {
		t.Fatalf("estimate %v after 10 s of 1.6 Mbit/s on loopback, state %+v", est.TargetRate(), st)
	}
}

// sendOverLoopback sends 1000-byte VP8 packets every 5 ms from a PeerConnection with the
// send-side interceptor to one with Pion's TWCC feedback generator, until done or 10 s.
func sendOverLoopback(t *testing.T, newController func() cc.RateController, done func(*Estimator, uint16) bool) *Estimator {
	t.Helper()
	var est *Estimator
	factory := FactoryFunc(func(string) (interceptor.Interceptor, error) {
		s := NewSendSide(newController(), 20*time.Millisecond)
		est = s.Estimator()
		return s, nil
	})
	twccSender, err := twcc.NewSenderInterceptor(twcc.SendInterval(50 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	sender, err := newAPI(t, factory).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	if est == nil {
		t.Fatal("the PeerConnection did not build its send-side interceptor")
	}
	receiver, err := newAPI(t, twccSender).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close()

	track, _ := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, "v", "s")
	rtpSender, err := sender.AddTrack(track)
	if err != nil {
		t.Fatal(err)
	}
	// Pion passes RTCP through the interceptors only as the application reads it.
	go func() {
		for {
			if _, _, err := rtpSender.ReadRTCP(); err != nil {
				return
			}
		}
	}()
	got := make(chan struct{}, 1)
	receiver.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			select {
			case got <- struct{}{}:
			default:
			}
		}
	})
	connect(t, sender, receiver)

	payload := make([]byte, 1000)
	deadline := time.Now().Add(10 * time.Second)
	for seq := uint16(0); time.Now().Before(deadline) && !done(est, seq); seq++ {
		_ = track.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: uint32(seq) * 3000}, Payload: payload})
		time.Sleep(5 * time.Millisecond)
	}
	<-got
	return est
}

// connect does a non-trickle offer/answer between two local PeerConnections.
func connect(t *testing.T, offerer, answerer *webrtc.PeerConnection) {
	t.Helper()
	offer, err := offerer.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(offerer)
	if err := offerer.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	if err := answerer.SetRemoteDescription(*offerer.LocalDescription()); err != nil {
		t.Fatal(err)
	}
	answer, err := answerer.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered = webrtc.GatheringCompletePromise(answerer)
	if err := answerer.SetLocalDescription(answer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	if err := offerer.SetRemoteDescription(*answerer.LocalDescription()); err != nil {
		t.Fatal(err)
	}
}
