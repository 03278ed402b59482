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

// TestChannelServiceTakesItsPrefix: a channel whose label starts with a service's prefix goes to the
// service, every other one to the plugin's handler, and both are closed with the Peer.
func TestChannelServiceTakesItsPrefix(t *testing.T) {
	served := make(chan string, 4)
	svc := WithChannelService(ChannelService{Prefix: "svc:", Serve: func(_ *Peer, dc *webrtc.DataChannel) {
		served <- dc.Label()
	}})
	f := newTestFactory(t, testMedia(), svc)
	rec := newRecorder()
	srv := newTestPeer(t, f, rec.hooks())
	plugin := make(chan string, 4)
	srv.OnDataChannel(func(dc *webrtc.DataChannel) { plugin <- dc.Label() })
	c := newClient(t)
	c.addMedia(t) // opens "chat"
	if _, err := c.pc.CreateDataChannel("svc:get:x", nil); err != nil {
		t.Fatal(err)
	}
	connect(t, srv, rec, c)
	got := map[string]string{}
	for range 2 {
		select {
		case l := <-served:
			got[l] = "service"
		case l := <-plugin:
			got[l] = "plugin"
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out; dispatched so far: %v", got)
		}
	}
	if got["chat"] != "plugin" || got["svc:get:x"] != "service" {
		t.Errorf("dispatched %v, want chat to the plugin and svc:get:x to the service", got)
	}
	srv.dcs.mu.Lock()
	tracked := len(srv.dcs.dcs)
	srv.dcs.mu.Unlock()
	if tracked != 1 {
		t.Errorf("%d channels tracked for closing, want the service's 1 (the plugin tracks its own)", tracked)
	}
}
