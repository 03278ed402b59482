package peer

import (
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
)

// TestDataChannelsClosedBeforeThePeerConnection: Close resets a tracked channel and waits for the
// client to close its side before closing the PeerConnection (whose SCTP ABORT browsers report as
// an error on every channel still open): the client's channel closes while the server's
// PeerConnection is still connected.
func TestDataChannelsClosedBeforeThePeerConnection(t *testing.T) {
	srv, rec, c := newPair(t)
	got := make(chan *webrtc.DataChannel, 1)
	srv.PC.OnDataChannel(func(dc *webrtc.DataChannel) {
		srv.TrackDataChannel(dc)
		dc.OnOpen(func() { got <- dc })
	})
	clientOpen := make(chan struct{})
	c.dc.OnOpen(func() { close(clientOpen) })
	connect(t, srv, rec, c)
	waitFor(t, got, 10*time.Second, "the client's channel at the server")
	waitFor(t, clientOpen, 10*time.Second, "the client's channel open")
	state := make(chan webrtc.PeerConnectionState, 1)
	c.dc.OnClose(func() { state <- srv.PC.ConnectionState() })
	start := time.Now()
	srv.Close("test")
	if s := waitFor(t, state, 5*time.Second, "the client's channel closing"); s != webrtc.PeerConnectionStateConnected {
		t.Errorf("the client's channel closed with the server's PeerConnection %s, want it closed by a stream reset first", s)
	}
	t.Logf("Close took %v", time.Since(start))
}
