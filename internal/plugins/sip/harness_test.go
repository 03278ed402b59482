package sip

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sipptest"
)

// event is one event a handle pushed.
type event struct {
	tx   string
	data map[string]any
	jsep *plugin.JSEP
}

// testHandle is the gateway's side of a handle for tests of the signalling alone: it records the
// events; it has no PeerConnection.
type testHandle struct{ events chan event }

func (h *testHandle) ID() uint64        { return 1 }
func (h *testHandle) SessionID() uint64 { return 1 }
func (h *testHandle) OpaqueID() string  { return "" }
func (h *testHandle) PushEvent(tx string, data any, jsep *plugin.JSEP) error {
	raw, _ := json.Marshal(data)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	h.events <- event{tx, m, jsep}
	return nil
}
func (h *testHandle) Peer(...peer.PeerOption) (*peer.Peer, error) {
	return nil, errors.New("no media in this test")
}
func (h *testHandle) ClosePeer(string)     {}
func (h *testHandle) Logger() *slog.Logger { return testLogger() }

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// testConfig is plugins.sip on loopback with any free ports.
func testConfig() config.SIP {
	c := config.Default().Plugins.SIP
	c.LocalIP, c.RTPPortRange, c.KeepaliveInterval = "127.0.0.1", "", 0
	c.RecordingsDir = os.TempDir()
	return c
}

// attach creates a plugin and a handle on it, both gone at the end of the test.
func attach(t *testing.T) (*Plugin, *session, *testHandle) {
	t.Helper()
	p := New(testConfig(), testLogger())
	h := &testHandle{events: make(chan event, 64)}
	ps, err := p.Attach(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Destroy)
	return p, ps.(*session), h
}

// send sends a request to the handle.
func send(s *session, tx string, body any) plugin.Result {
	raw, _ := json.Marshal(body)
	return s.HandleMessage(context.Background(), plugin.Message{Transaction: tx, Body: raw})
}

// next waits for the handle's next event.
func (h *testHandle) next(t *testing.T) event {
	t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(15 * time.Second):
		t.Fatal("no event in 15 s")
	}
	return event{}
}

// result is an event's result.event (or "error <code>").
func (e event) result() string {
	if code, ok := e.data["error_code"]; ok {
		return "error " + strconv.Itoa(int(code.(float64)))
	}
	if r, ok := e.data["result"].(map[string]any); ok {
		s, _ := r["event"].(string)
		return s
	}
	return ""
}

func (e event) field(name string) any {
	r, _ := e.data["result"].(map[string]any)
	return r[name]
}

// sipp starts sipp for one call with args (a scenario of ./testdata and options).
func sipp(t *testing.T, args ...string) *sipptest.Sipp {
	t.Helper()
	return sipptest.Start(t, append([]string{"-m", "1"}, args...)...)
}
