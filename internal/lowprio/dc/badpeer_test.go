package dc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/lowprio"
)

// rawPeer is the test's own end of a low-priority channel: it records what arrives and sends
// whatever the test wants.
type rawPeer struct {
	ch     *webrtc.DataChannel
	got    chan []byte
	closed chan struct{}
}

func newRawPeer(t *testing.T, ch *webrtc.DataChannel) *rawPeer {
	r := &rawPeer{ch: ch, got: make(chan []byte, 4096), closed: make(chan struct{})}
	opened := make(chan struct{})
	ch.OnOpen(func() { close(opened) })
	ch.OnClose(func() { close(r.closed) })
	ch.OnMessage(func(m webrtc.DataChannelMessage) {
		select {
		case r.got <- m.Data:
		default:
		}
	})
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("channel did not open")
	}
	return r
}

// reset waits for a RESET and returns it decoded.
func (r *rawPeer) reset(t *testing.T) lowprio.Message {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case b := <-r.got:
			var m lowprio.Message
			if lowprio.Decode(b, &m) == nil && m.Type == lowprio.TypeReset {
				m.Reason = append([]byte(nil), m.Reason...)
				return m
			}
		case <-timeout:
			t.Fatal("no RESET")
		}
	}
}

func encode(t *testing.T, f func([]byte) ([]byte, error)) []byte {
	b, err := f(make([]byte, 0, 2048))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A peer that sends garbage on a transfer's channel gets a RESET with code 1 and a reason, the
// transfer ends with an error and its channel closes; the PeerConnection, a transfer running
// beside it and another channel keep working.
func TestBadPeerGetsReset(t *testing.T) {
	forgedAck := &lowprio.Message{Transfer: 1, CumSeq: 1 << 30, Limit: 1 << 20}
	otherAck := &lowprio.Message{Transfer: 2, Limit: 1 << 20}
	for _, c := range []struct {
		name   string
		verb   string // the bad peer's verb: get means the server side sends
		text   bool
		msg    func(t *testing.T) []byte
		reason string
	}{
		{"bad version", VerbGet, false, func(*testing.T) []byte { return []byte{0x91, 0, 0, 0, 1} }, "version"},
		{"truncated", VerbGet, false, func(*testing.T) []byte { return []byte{0x12, 0, 0} }, "short"},
		{"text", VerbGet, true, func(*testing.T) []byte { return []byte("hello") }, "text"},
		{"forged ACK", VerbGet, false, func(t *testing.T) []byte {
			return encode(t, func(b []byte) ([]byte, error) { return lowprio.EncodeAck(b, forgedAck) })
		}, "never sent"},
		{"another transfer", VerbGet, false, func(t *testing.T) []byte {
			return encode(t, func(b []byte) ([]byte, error) { return lowprio.EncodeAck(b, otherAck) })
		}, "another transfer"},
		{"DATA to a sender", VerbGet, false, func(t *testing.T) []byte {
			return encode(t, func(b []byte) ([]byte, error) { return lowprio.EncodeData(b, 1, 0, 0, 0, []byte("x")) })
		}, "not for this endpoint"},
		{"DATA beyond the window", VerbPut, false, func(t *testing.T) []byte {
			return encode(t, func(b []byte) ([]byte, error) { return lowprio.EncodeData(b, 1, 0, 0, 1<<40, []byte("x")) })
		}, "outside the receive window"},
		{"ACK to a receiver", VerbPut, false, func(t *testing.T) []byte {
			return encode(t, func(b []byte) ([]byte, error) { return lowprio.EncodeAck(b, otherAck) })
		}, "another transfer"},
	} {
		t.Run(c.name, func(t *testing.T) { badPeer(t, c.verb, c.text, c.msg(t), c.reason) })
	}
}

func badPeer(t *testing.T, verb string, text bool, bad []byte, reason string) {
	p := newPCPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Attach in Pion's accept callback, as strata's service does: a message that arrived before
	// the transfer's handler would be dropped by Pion, and the bad one must reach the transfer.
	attached := make(chan *Transfer, 4)
	p.b.OnDataChannel(func(ch *webrtc.DataChannel) { attached <- Attach(ch, Options{}) })
	served := make(chan error, 2)
	serve := func(tr *Transfer) {
		verb, name, err := ParseLabel(tr.c.ch.Label())
		if err != nil {
			served <- err
			return
		}
		n, _, _ := ParseGenerated(name)
		if verb == VerbGet {
			_, err = tr.Send(ctx, Generated(n))
		} else {
			v := &Verifier{N: n}
			if _, err = tr.Receive(ctx, v); err == nil {
				err = v.Check()
			}
		}
		served <- err
	}
	badCh, err := p.a.CreateDataChannel(Label(verb, "gen:100000000"), Init())
	if err != nil {
		t.Fatal(err)
	}
	go serve(<-attached)
	raw := newRawPeer(t, badCh)
	if verb == VerbGet {
		<-raw.got // the transfer is running
	}
	// A good transfer beside the bad one.
	good, err := p.a.CreateDataChannel(Label(VerbPut, "gen:1000000"), Init())
	if err != nil {
		t.Fatal(err)
	}
	go serve(<-attached)
	goodDone := make(chan error, 1)
	go func() { _, err := Send(ctx, good, Generated(1_000_000), Options{}); goodDone <- err }()

	if text {
		err = badCh.SendText(string(bad))
	} else {
		err = badCh.Send(bad)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := raw.reset(t)
	if m.Code != lowprio.CodeProtocol || !contains(string(m.Reason), reason) {
		t.Errorf("RESET code %d reason %q, want code 1 and %q", m.Code, m.Reason, reason)
	}
	if err := <-served; err == nil || !contains(err.Error(), reason) {
		t.Errorf("the served transfer ended with %v, want an error about %q", err, reason)
	}
	select {
	case <-raw.closed:
	case <-time.After(10 * time.Second):
		t.Error("the bad channel stayed open")
	}
	if err := <-goodDone; err != nil {
		t.Errorf("the transfer beside it: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("the served side of the transfer beside it: %v", err)
	}
	if s := p.a.ConnectionState(); s != webrtc.PeerConnectionStateConnected {
		t.Errorf("PeerConnection %v", s)
	}
	// And a new channel still opens and carries a transfer.
	again, err := p.a.CreateDataChannel(Label(VerbPut, "gen:5000"), Init())
	if err != nil {
		t.Fatal(err)
	}
	go serve(<-attached)
	if _, err := Send(ctx, again, Generated(5000), Options{}); err != nil {
		t.Errorf("a new transfer after the bad one: %v", err)
	}
	if err := <-served; err != nil {
		t.Error(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
