package echotest

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// testHandle is a plugin.Handle backed by a real peer.Factory, standing in for the gateway: it makes
// the PeerConnection on first use, calls the session's MediaReady/MediaClosed from the peer's hooks,
// and delivers pushed events (marshalled to JSON and back, as a transport would) on a channel.
type testHandle struct {
	t       *testing.T
	factory *peer.Factory
	log     *slog.Logger

	mu      sync.Mutex
	sess    plugin.Session
	p       *peer.Peer
	events  chan event
	hangups chan string
}

type event struct {
	tx   string
	data map[string]any
	jsep *plugin.JSEP
}

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newTestHandle(t *testing.T) *testHandle {
	t.Helper()
	m := config.Default().Media
	m.ICE.Loopback = true
	m.ICE.Interfaces = []string{"lo"}
	f, err := peer.NewFactory(m, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return &testHandle{t: t, factory: f, log: testLogger(), events: make(chan event, 64), hangups: make(chan string, 4)}
}

// attach attaches a new echotest session to the handle.
func (h *testHandle) attach(p *Plugin) plugin.Session {
	h.t.Helper()
	s, err := p.Attach(h)
	if err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	h.sess = s
	h.mu.Unlock()
	h.t.Cleanup(func() {
		s.Detach()
		h.ClosePeer("test over")
	})
	return s
}

func (h *testHandle) ID() uint64           { return 2 }
func (h *testHandle) SessionID() uint64    { return 1 }
func (h *testHandle) OpaqueID() string     { return "echotest-test" }
func (h *testHandle) Logger() *slog.Logger { return h.log }

func (h *testHandle) PushEvent(tx string, data any, jsep *plugin.JSEP) error {
	raw, err := json.Marshal(data)
	if err != nil {
		h.t.Errorf("event does not marshal: %v", err)
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		h.t.Errorf("event is not an object: %s", raw)
		return err
	}
	h.events <- event{tx: tx, data: m, jsep: jsep}
	return nil
}

func (h *testHandle) Peer(opts ...peer.PeerOption) (*peer.Peer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p != nil {
		select {
		case <-h.p.Closed():
		default:
			return h.p, nil
		}
	}
	sess := h.sess
	p, err := h.factory.New(peer.Hooks{
		OnUp: func() { sess.MediaReady() },
		OnHangup: func(reason string) {
			sess.MediaClosed(reason)
			h.hangups <- reason
		},
	}, opts...)
	if err != nil {
		return nil, err
	}
	h.p = p
	return p, nil
}

func (h *testHandle) ClosePeer(reason string) {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	if p != nil {
		p.Close(reason)
	}
}

// request sends a message and returns the event answering it (Janus: ack, then event).
func (h *testHandle) request(s plugin.Session, body string, jsep *plugin.JSEP) event {
	h.t.Helper()
	tx := "tx" + time.Now().Format("150405.000000000")
	res := s.HandleMessage(context.Background(), plugin.Message{Transaction: tx, Body: json.RawMessage(body), JSEP: jsep})
	if !res.Async || res.Hint != hint {
		h.t.Fatalf("request %s: result %+v, want async with hint", body, res)
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-h.events:
			if ev.tx == tx {
				return ev
			}
		case <-deadline:
			h.t.Fatalf("no event answering %s", body)
		}
	}
}

// nextEvent waits for an unsolicited event that satisfies match.
func (h *testHandle) nextEvent(match func(event) bool, d time.Duration) (event, bool) {
	deadline := time.After(d)
	for {
		select {
		case ev := <-h.events:
			if match(ev) {
				return ev, true
			}
		case <-deadline:
			return event{}, false
		}
	}
}
