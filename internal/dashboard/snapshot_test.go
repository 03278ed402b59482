package dashboard

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/gateway"
)

// fakeGateway has sessions and handles without PeerConnections (a Peer needs a real stack; the
// server's tests cover those).
type fakeGateway struct {
	sessions []gateway.SessionRef
	handles  []gateway.HandleRef
}

func (f fakeGateway) SessionRefs() []gateway.SessionRef { return f.sessions }
func (f fakeGateway) HandleRefs() []gateway.HandleRef   { return f.handles }
func (f fakeGateway) PluginQuery(uint64) any            { return nil }

// TestSnapshotCapsSessions: a big server's snapshot lists MaxSessions but counts them all, and
// gives each its handles.
func TestSnapshotCapsSessions(t *testing.T) {
	var gw fakeGateway
	for i := range MaxSessions + 10 {
		gw.sessions = append(gw.sessions, gateway.SessionRef{ID: uint64(i + 1), Transport: "http"})
	}
	gw.handles = []gateway.HandleRef{{Session: 1, Handle: 100, Plugin: "janus.plugin.echotest"}, {Session: 1, Handle: 101, Plugin: "janus.plugin.echotest"}}
	b := builder{gw: gw, rates: newRateTracker(), now: time.Now}
	s := b.snapshot()
	if s.SessionCount != MaxSessions+10 || len(s.Sessions) != MaxSessions {
		t.Errorf("sessions %d listed of %d, want %d of %d", len(s.Sessions), s.SessionCount, MaxSessions, MaxSessions+10)
	}
	if s.Sessions[0].Handles != 2 || s.Sessions[1].Handles != 0 {
		t.Errorf("handles per session %+v %+v, want 2 then 0", s.Sessions[0], s.Sessions[1])
	}
	if s.PeerCount != 0 || s.PeerConnections == nil || len(s.PeerConnections) != 0 {
		t.Errorf("PeerConnections %d %v for handles without one", s.PeerCount, s.PeerConnections)
	}
}

// TestLayersOf reads a videoroom subscriber's plugin_specific and ignores streams without layers.
func TestLayersOf(t *testing.T) {
	q := json.RawMessage(`{"type":"subscriber","streams":[{"mid":"0","type":"audio"},{"mid":"1","current":"s1t2","target":"s2t2","max":"s2t2"}]}`)
	got := layersOf(q)
	if len(got) != 1 || got[0] != (Layer{Mid: "1", Current: "s1t2", Target: "s2t2"}) {
		t.Errorf("layers %+v", got)
	}
	if layersOf(map[string]string{"error": "x"}) != nil || layersOf(json.RawMessage(`[`)) != nil {
		t.Error("layers from a query that has none")
	}
}
