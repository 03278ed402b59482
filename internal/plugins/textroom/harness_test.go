package textroom_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/textroom"
)

const roomSecret = "adminpwd"

// start runs strata with the sample room 1234 (its secret set, so that tests know it).
func start(t *testing.T, edit func(*config.TextRoom)) *janusclient.Client {
	t.Helper()
	return janustest.StartServer(t, func(c *config.Config) {
		c.Plugins.TextRoom.Rooms[0].Secret = roomSecret
		if edit != nil {
			edit(&c.Plugins.TextRoom)
		}
	}, janustest.Logger())
}

// user is a Pion client set up with the text room: a handle and the data channel strata offered.
type user struct {
	t    *testing.T
	h    *janusclient.Handle
	dc   *webrtc.DataChannel
	msgs chan map[string]any
	// pending are messages read while waiting for a reply, for next to return first.
	pending []map[string]any
}

// setup attaches, sends setup, answers strata's offer with ack, opening a data channel as janus.js
// does, and waits for it to open.
func setup(t *testing.T, c *janusclient.Client) *user {
	t.Helper()
	u := &user{t: t, h: janustest.Attach(t, c, textroom.Package), msgs: make(chan map[string]any, 64)}
	data, offer := janustest.MustRequest(t, u.h, map[string]any{"request": "setup"}, nil)
	if data["result"] != "ok" || offer == nil || offer.Type != "offer" {
		t.Fatalf("setup: %v %v", data, offer)
	}
	pc, err := webrtc.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	// As janus.js, the client opens the data channel; strata opens none of its own (Janus's way).
	pc.OnDataChannel(func(dc *webrtc.DataChannel) { t.Errorf("strata opened a data channel %q", dc.Label()) })
	dc, err := pc.CreateDataChannel("JanusDataChannel", nil)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *webrtc.DataChannel, 1)
	dc.OnOpen(func() { opened <- dc })
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var v map[string]any
		if err := json.Unmarshal(m.Data, &v); err != nil {
			t.Errorf("not JSON from strata: %q", m.Data)
			return
		}
		u.msgs <- v
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = janustest.MustRequest(t, u.h, map[string]any{"request": "ack"}, janustest.CompleteLocal(t, pc, answer))
	if data["result"] != "ok" {
		t.Fatalf("ack: %v", data)
	}
	select {
	case u.dc = <-opened:
	case <-time.After(15 * time.Second):
		t.Fatal("data channel did not open")
	}
	return u
}

// sendRaw sends one text message on the data channel.
func (u *user) sendRaw(s string) {
	u.t.Helper()
	if err := u.dc.SendText(s); err != nil {
		u.t.Fatal(err)
	}
}

// request sends a request and returns the reply carrying its transaction; the other messages
// arriving meanwhile are returned too, in order, and kept for next.
func (u *user) request(tx string, body map[string]any) (reply map[string]any, others []map[string]any) {
	u.t.Helper()
	body["transaction"] = tx
	b, _ := json.Marshal(body)
	u.sendRaw(string(b))
	for {
		m := u.receive()
		if m["transaction"] == tx {
			u.pending = append(u.pending, others...)
			return m, others
		}
		others = append(others, m)
	}
}

// next is the next message strata sent on the data channel.
func (u *user) next() map[string]any {
	u.t.Helper()
	if len(u.pending) > 0 {
		m := u.pending[0]
		u.pending = u.pending[1:]
		return m
	}
	return u.receive()
}

// receive waits for a message from the data channel.
func (u *user) receive() map[string]any {
	u.t.Helper()
	select {
	case m := <-u.msgs:
		return m
	case <-time.After(10 * time.Second):
		u.t.Fatal("no message on the data channel")
		return nil
	}
}

// await skips messages until one has "textroom" equal to kind.
func (u *user) await(kind string) map[string]any {
	u.t.Helper()
	for {
		if m := u.next(); m["textroom"] == kind {
			return m
		}
	}
}

// wantError checks a reply is Janus's error with code.
func wantError(t *testing.T, reply map[string]any, code int) {
	t.Helper()
	if reply["textroom"] != "error" || reply["error_code"] != float64(code) {
		t.Fatalf("reply %v, want error %d", reply, code)
	}
}
