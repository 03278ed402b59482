package dc

import (
	"testing"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer/peertest"
)

// pcPair is two real Pion PeerConnections on loopback; channels the answerer's side accepts
// arrive on accepted.
type pcPair struct {
	a, b     *webrtc.PeerConnection
	accepted chan *webrtc.DataChannel
}

func newPCPair(t *testing.T) *pcPair {
	t.Helper()
	api := peertest.BrowserAPI(t)
	p := &pcPair{accepted: make(chan *webrtc.DataChannel, 16)}
	var err error
	if p.a, err = api.NewPeerConnection(webrtc.Configuration{}); err != nil {
		t.Fatal(err)
	}
	if p.b, err = api.NewPeerConnection(webrtc.Configuration{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.a.Close(); _ = p.b.Close() })
	p.b.OnDataChannel(func(d *webrtc.DataChannel) { p.accepted <- d })
	// A first channel so the offer has an SCTP section; later channels need no renegotiation.
	if _, err := p.a.CreateDataChannel("signal", nil); err != nil {
		t.Fatal(err)
	}
	signal(t, p.a, p.b)
	<-p.accepted
	return p
}

func signal(t *testing.T, offerer, answerer *webrtc.PeerConnection) {
	t.Helper()
	offer, err := offerer.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(offerer)
	if err := offerer.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := answerer.SetRemoteDescription(*offerer.LocalDescription()); err != nil {
		t.Fatal(err)
	}
	answer, err := answerer.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done = webrtc.GatheringCompletePromise(answerer)
	if err := answerer.SetLocalDescription(answer); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := offerer.SetRemoteDescription(*answerer.LocalDescription()); err != nil {
		t.Fatal(err)
	}
}
