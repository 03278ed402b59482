package peer

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
)

func TestAnswerHalfTrickleCarriesCandidates(t *testing.T) {
	srv, rec, c := newPair(t)
	answer := connect(t, srv, rec, c)

	if n := countLines(answer.SDP, "a=candidate:"); n == 0 {
		t.Errorf("half-trickle answer has no candidates:\n%s", answer.SDP)
	}
	if n := countLines(answer.SDP, "a=end-of-candidates"); n == 0 {
		t.Errorf("half-trickle answer has no a=end-of-candidates")
	}
	if n := countLines(answer.SDP, "a=setup:passive"); n == 0 || countLines(answer.SDP, "a=setup:active") > 0 {
		t.Errorf("answer is not DTLS passive (server):\n%s", answer.SDP)
	}
	if len(rec.cands) != 0 {
		t.Errorf("OnCandidate fired in half-trickle mode")
	}
}

func TestAnswerFullTrickleReportsCandidatesThroughHook(t *testing.T) {
	m := testMedia()
	m.ICE.FullTrickle = true
	f := newTestFactory(t, m)
	rec := newRecorder()
	srv := newTestPeer(t, f, rec.hooks())
	c := newClient(t)
	c.addMedia(t)

	answer, err := srv.Answer(testContext(t), c.offer(t, true))
	if err != nil {
		t.Fatal(err)
	}
	if n := countLines(answer.SDP, "a=candidate:"); n != 0 {
		t.Errorf("full-trickle answer carries %d candidates", n)
	}
	if err := c.pc.SetRemoteDescription(answer); err != nil {
		t.Fatal(err)
	}
	var got int
	for {
		cand := waitFor(t, rec.cands, 5*time.Second, "trickled candidate")
		if cand == nil {
			break
		}
		got++
		if err := c.pc.AddICECandidate(*cand); err != nil {
			t.Fatalf("client rejects trickled candidate %q: %v", cand.Candidate, err)
		}
	}
	if got == 0 {
		t.Fatal("no candidate trickled before the end-of-candidates nil")
	}
	waitFor(t, rec.up, 10*time.Second, "OnUp")
}

func TestDTLSServerRoleNegotiatesAEADGCM(t *testing.T) {
	srv, rec, c := newPair(t)
	connect(t, srv, rec, c)

	info := srv.Info()
	if info.DTLS.Role != "passive" {
		t.Errorf("DTLS role %q, want passive", info.DTLS.Role)
	}
	// The Pion client offers GCM profiles; as server strata picks AES-128-GCM first.
	if info.DTLS.SRTPProfile != "SRTP_AEAD_AES_128_GCM" {
		t.Errorf("SRTP profile %q, want SRTP_AEAD_AES_128_GCM", info.DTLS.SRTPProfile)
	}
	if info.DTLS.State != "connected" {
		t.Errorf("DTLS state %q", info.DTLS.State)
	}
	if info.DTLS.Fingerprint == "" || info.DTLS.RemoteFingerprint == "" || info.DTLS.RemoteFingerprintHash != "sha-256" {
		t.Errorf("fingerprints missing: %+v", info.DTLS)
	}
}

func TestOnUpFiresOnce(t *testing.T) {
	srv, rec, c := newPair(t)
	connect(t, srv, rec, c)
	select {
	case <-rec.up:
		t.Fatal("OnUp fired twice")
	case <-time.After(300 * time.Millisecond):
	}
}

func TestRemoteCandidatesBeforeRemoteDescriptionAreQueued(t *testing.T) {
	srv, rec, c := newPair(t)

	var mu sync.Mutex
	var trickled []webrtc.ICECandidateInit
	gathered := make(chan struct{})
	c.pc.OnICECandidate(func(cand *webrtc.ICECandidate) {
		if cand == nil {
			close(gathered)
			return
		}
		mu.Lock()
		trickled = append(trickled, cand.ToJSON())
		mu.Unlock()
	})
	offer := c.offer(t, false) // no candidates in the SDP: they all trickle
	waitFor(t, gathered, 5*time.Second, "client gathering")
	mu.Lock()
	cands := trickled
	mu.Unlock()
	if len(cands) == 0 {
		t.Fatal("client gathered nothing")
	}
	for _, cand := range cands {
		if err := srv.AddRemoteCandidate(cand); err != nil {
			t.Fatalf("AddRemoteCandidate before the offer: %v", err)
		}
	}
	srv.RemoteCandidatesDone()
	answer, err := srv.Answer(testContext(t), offer)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.pc.SetRemoteDescription(answer); err != nil {
		t.Fatal(err)
	}
	waitFor(t, rec.up, 10*time.Second, "OnUp")

	// Host-typed remote candidates can only come from the queued trickles (the offer had none;
	// candidates learned from connectivity checks would be prflx).
	info := srv.Info()
	host := 0
	for _, rc := range info.ICE.RemoteCandidates {
		if strings.HasSuffix(rc, "typ host") {
			host++
		}
	}
	if host == 0 {
		t.Errorf("no host remote candidate after queued trickles: %v", info.ICE.RemoteCandidates)
	}
	if !info.ICE.AllTrickles {
		t.Error("all-trickles not recorded")
	}
}

func TestCloseFiresHangupOnce(t *testing.T) {
	srv, rec, c := newPair(t)
	connect(t, srv, rec, c)

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.Close("bye")
		}()
	}
	wg.Wait()
	if reason := waitFor(t, rec.hangupCh, time.Second, "OnHangup"); reason != "bye" {
		t.Errorf("hangup reason %q", reason)
	}
	time.Sleep(200 * time.Millisecond) // let Pion's late state callbacks run
	if n := rec.hangupCount(); n != 1 {
		t.Errorf("OnHangup fired %d times", n)
	}
	if err := srv.AddRemoteCandidate(webrtc.ICECandidateInit{Candidate: "candidate:1 1 udp 1 127.0.0.1 9 typ host"}); err != ErrClosed {
		t.Errorf("AddRemoteCandidate after Close: %v", err)
	}
}

func TestRemoteCloseHangsUpWithDTLSAlert(t *testing.T) {
	srv, rec, c := newPair(t)
	opened := make(chan struct{})
	c.dc.OnOpen(func() { close(opened) })
	connect(t, srv, rec, c)
	// Close once both ends are fully up (SCTP runs over the finished DTLS association), so the
	// close_notify finds a server that listens for it.
	waitFor(t, opened, 5*time.Second, "data channel open")

	if err := c.pc.Close(); err != nil {
		t.Fatal(err)
	}
	if reason := waitFor(t, rec.hangupCh, 10*time.Second, "OnHangup after remote close"); reason != ReasonDTLSAlert {
		t.Errorf("hangup reason %q, want %q", reason, ReasonDTLSAlert)
	}
	srv.Close("again")
	time.Sleep(100 * time.Millisecond)
	if n := rec.hangupCount(); n != 1 {
		t.Errorf("OnHangup fired %d times", n)
	}
}

func TestInfoAndMediaEventsAfterMediaFlows(t *testing.T) {
	srv, rec, c := newPair(t)

	// The server sends VP8 back, so Out statistics have something to count.
	var back *webrtc.TrackLocalStaticRTP
	addBack := BeforeLocal(func(pc *webrtc.PeerConnection) error {
		var err error
		back, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "echo", "strata")
		if err != nil {
			return err
		}
		s, err := pc.AddTrack(back)
		if err == nil {
			go drainRTCP(s)
		}
		return err
	})
	connect(t, srv, rec, c, addBack)
	c.pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go drain(tr) })

	stop := make(chan struct{})
	go sendRTP(c.video, 96, 10000, 10*time.Millisecond, stop)
	go sendRTP(back, 96, 10000, 10*time.Millisecond, stop)
	if ev := waitFor(t, rec.media, 5*time.Second, "media event"); ev != "video:on" {
		t.Fatalf("first media event %q, want video:on", ev)
	}
	time.Sleep(1200 * time.Millisecond)

	info := srv.Info()
	raw, err := json.Marshal(info)
	if err != nil {
		t.Fatalf("Info does not marshal: %v", err)
	}
	var video *MediaInfo
	for _, m := range info.Media {
		if m.Type == "video" {
			video = &m
		}
	}
	if video == nil {
		t.Fatalf("no video m-line in %s", raw)
	}
	if video.Codec != "vp8" || len(video.PeerSSRCs) != 1 || video.SSRC == 0 {
		t.Errorf("video m-line: %+v", *video)
	}
	if video.In.Packets < 20 || video.In.Bytes == 0 || video.In.Bitrate == 0 {
		t.Errorf("inbound stats not counted: %+v", video.In)
	}
	if video.Out.Packets < 20 || video.Out.Bitrate == 0 {
		t.Errorf("outbound stats not counted: %+v", video.Out)
	}
	if info.ICE.SelectedPair == "" || len(info.ICE.LocalCandidates) == 0 || info.ICE.State != "connected" {
		t.Errorf("ICE info: %+v", info.ICE)
	}
	var data bool
	for _, m := range info.Media {
		data = data || m.Type == "data"
	}
	if !data {
		t.Errorf("no data m-line in %s", raw)
	}

	close(stop)
	if ev := waitFor(t, rec.media, 5*time.Second, "media stopped event"); ev != "video:off" {
		t.Errorf("media event after stop %q, want video:off", ev)
	}
}

func TestUDPMuxPortCarriesEveryPeer(t *testing.T) {
	m := testMedia()
	m.ICE.UDPMuxPort = freeUDPPort(t)
	f := newTestFactory(t, m)
	for i := range 2 {
		rec := newRecorder()
		srv := newTestPeer(t, f, rec.hooks())
		c := newClient(t)
		c.addMedia(t)
		answer := connect(t, srv, rec, c)
		for line := range strings.Lines(answer.SDP) {
			if strings.HasPrefix(line, "a=candidate:") && !strings.Contains(line, " "+itoa(m.ICE.UDPMuxPort)+" typ") {
				t.Errorf("peer %d: candidate not on the mux port %d: %s", i, m.ICE.UDPMuxPort, line)
			}
		}
	}
}

// After strata offers (a renegotiation, an ICE restart), candidates the client trickles before its
// answer arrives wait for the answer instead of going to the previous session's description.
func TestCandidatesWaitForTheAnswerToAServerOffer(t *testing.T) {
	srv, rec, c := newPair(t)
	connect(t, srv, rec, c)
	offer, err := srv.Offer(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	cand := webrtc.ICECandidateInit{Candidate: "candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host"}
	if err := srv.AddRemoteCandidate(cand); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	queued := len(srv.cands.pending)
	srv.mu.Unlock()
	if queued != 1 {
		t.Fatalf("%d candidates queued before the answer, want 1", queued)
	}
	if err := c.pc.SetRemoteDescription(offer); err != nil {
		t.Fatal(err)
	}
	answer, err := c.pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.pc.SetLocalDescription(answer); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetAnswer(answer); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	queued = len(srv.cands.pending)
	srv.mu.Unlock()
	if queued != 0 {
		t.Fatalf("%d candidates still queued after the answer", queued)
	}
}
