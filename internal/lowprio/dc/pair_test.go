package dc

import (
	"context"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := signalCtx(ctx, offerer, answerer); err != nil {
		t.Fatal(err)
	}
}

// signalCtx runs the offer/answer exchange in-process, with complete gathering (no trickle).
func signalCtx(ctx context.Context, offerer, answerer *webrtc.PeerConnection) error {
	offer, err := offerer.CreateOffer(nil)
	if err != nil {
		return err
	}
	if err := setLocal(ctx, offerer, offer); err != nil {
		return err
	}
	if err := answerer.SetRemoteDescription(*offerer.LocalDescription()); err != nil {
		return err
	}
	answer, err := answerer.CreateAnswer(nil)
	if err != nil {
		return err
	}
	if err := setLocal(ctx, answerer, answer); err != nil {
		return err
	}
	return offerer.SetRemoteDescription(*answerer.LocalDescription())
}

func setLocal(ctx context.Context, pc *webrtc.PeerConnection, d webrtc.SessionDescription) error {
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(d); err != nil {
		return err
	}
	select {
	case <-gathered:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
