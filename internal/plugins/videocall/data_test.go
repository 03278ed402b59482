package videocall_test

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// inbox keeps the data channel messages a user receives, as "label:text" (binary as "label:#hex").
type inbox struct {
	mu   sync.Mutex
	msgs []string
	dcs  map[string]*webrtc.DataChannel
}

func (in *inbox) watch(dc *webrtc.DataChannel) {
	in.mu.Lock()
	if in.dcs[dc.Label()] == nil {
		in.dcs[dc.Label()] = dc
	}
	in.mu.Unlock()
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		s := dc.Label() + ":" + string(m.Data)
		if !m.IsString {
			s = dc.Label() + ":#" + string(m.Data)
		}
		in.mu.Lock()
		in.msgs = append(in.msgs, s)
		in.mu.Unlock()
	})
}

func (in *inbox) has(msg string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, m := range in.msgs {
		if m == msg {
			return true
		}
	}
	return false
}

func (in *inbox) channel(label string) *webrtc.DataChannel {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.dcs[label]
}

func newInbox(u *user) *inbox {
	in := &inbox{dcs: map[string]*webrtc.DataChannel{}}
	u.pc.OnDataChannel(in.watch)
	return in
}

// Data channels are relayed between the two users by label, as Janus's videocall relays them: the
// caller's janus.js channel reaches the callee (strata opens its twin in the call's offer), text
// and binary keep their kind, and a channel the callee opens later with a new label appears on
// the caller's side with that label.
func TestDataChannelsAreRelayed(t *testing.T) {
	c := janustest.StartServer(t, nil, janustest.Logger())
	alice, bob := newUser(t, c, "alice"), newUser(t, c, "bob")
	aliceIn, bobIn := newInbox(alice), newInbox(bob)
	dc, err := alice.pc.CreateDataChannel("JanusDataChannel", nil)
	if err != nil {
		t.Fatal(err)
	}
	aliceIn.watch(dc)
	opened := make(chan struct{})
	dc.OnOpen(func() { close(opened) })
	connect(t, alice, bob)
	select {
	case <-opened:
	case <-time.After(20 * time.Second):
		t.Fatal("alice's data channel did not open")
	}
	if err := dc.SendText("hello bob"); err != nil {
		t.Fatal(err)
	}
	if err := dc.Send([]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob receiving alice's text", func() bool { return bobIn.has("JanusDataChannel:hello bob") })
	waitFor(t, "bob receiving alice's binary", func() bool { return bobIn.has("JanusDataChannel:#\x01\x02\x03") })

	back := bobIn.channel("JanusDataChannel")
	if err := back.SendText("hello alice"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alice receiving bob's reply", func() bool { return aliceIn.has("JanusDataChannel:hello alice") })

	chat, err := bob.pc.CreateDataChannel("chat", nil)
	if err != nil {
		t.Fatal(err)
	}
	chat.OnOpen(func() { _ = chat.SendText("on another channel") })
	waitFor(t, "alice receiving on bob's new channel", func() bool { return aliceIn.has("chat:on another channel") })
}
