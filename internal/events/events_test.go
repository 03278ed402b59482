package events

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseMask(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Mask
	}{
		{"all", MaskAll}, {" ALL ", MaskAll}, {"none", MaskNone}, {"", MaskNone},
		{"sessions", Mask(TypeSession)},
		{"sessions,handles,jsep", Mask(TypeSession | TypeHandle | TypeJSEP)},
		{" Webrtc , media,,plugins ", Mask(TypeWebRTC | TypeMedia | TypePlugin)},
		{"core,transports,external", Mask(TypeCore | TypeTransport | TypeExternal)},
	} {
		got, err := ParseMask(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseMask(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"session", "sessions,bogus", "1", "all,sessions"} {
		if _, err := ParseMask(bad); err == nil || !strings.Contains(err.Error(), "unknown event type") {
			t.Errorf("ParseMask(%q): %v, want an unknown event type error", bad, err)
		}
	}
	if s := Mask(TypeSession | TypeCore).String(); s != "sessions,core" {
		t.Errorf("String %q", s)
	}
}

// FuzzParseMask: any input parses or fails without panicking, and a parsed mask survives String.
func FuzzParseMask(f *testing.F) {
	for _, s := range []string{"all", "none", "sessions,handles", " jsep , media", "bogus", ",,,", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMask(s)
		if err != nil {
			return
		}
		again, err := ParseMask(m.String())
		if err != nil || again != m {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, m, m.String(), again, err)
		}
	})
}

// recorder is a Handler that keeps what it is offered.
type recorder struct {
	mask Mask
	mu   sync.Mutex
	got  [][]byte
}

func (r *recorder) Name() string { return "rec" }
func (r *recorder) Mask() Mask   { return r.mask }
func (r *recorder) Offer(ev []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, ev)
	return true
}
func (r *recorder) Query(json.RawMessage) any { return nil }
func (r *recorder) Stats() Stats              { return Stats{} }
func (r *recorder) Close(time.Duration)       {}

// TestEmitFormat: Janus's members, order and omissions; each handler gets the types its mask
// selects; a nil bus and a closed bus emit nothing.
func TestEmitFormat(t *testing.T) {
	all, sessions := &recorder{mask: MaskAll}, &recorder{mask: Mask(TypeSession)}
	b := NewBus("strata-1", []Handler{all, sessions}, nil)
	b.now = func() time.Time { return time.UnixMicro(1234567) }
	if !b.Wants(TypeMedia) || b.Handler("rec") != all {
		t.Fatal("Wants / Handler")
	}
	b.Emit(Event{Type: TypeSession, SessionID: 7, Body: map[string]any{"name": "created"}})
	b.Emit(Event{Type: TypeHandle, SessionID: 7, HandleID: 9, OpaqueID: "op", Body: map[string]any{"name": "attached"}})
	b.Emit(Event{Type: TypeCore, Subtype: SubtypeCoreStartup, Body: map[string]any{"status": "started"}})
	want := []string{
		`{"emitter":"strata-1","type":1,"timestamp":1234567,"session_id":7,"event":{"name":"created"}}`,
		`{"emitter":"strata-1","type":2,"timestamp":1234567,"session_id":7,"handle_id":9,"opaque_id":"op","event":{"name":"attached"}}`,
		`{"emitter":"strata-1","type":256,"subtype":1,"timestamp":1234567,"event":{"status":"started"}}`,
	}
	if len(all.got) != 3 || len(sessions.got) != 1 {
		t.Fatalf("offered %d and %d events", len(all.got), len(sessions.got))
	}
	for i, w := range want {
		if string(all.got[i]) != w {
			t.Errorf("event %d:\n got %s\nwant %s", i, all.got[i], w)
		}
	}
	b.Close(time.Second)
	b.Emit(Event{Type: TypeSession, SessionID: 8})
	if len(all.got) != 3 {
		t.Error("emitted after Close")
	}
	var nilBus *Bus
	nilBus.Emit(Event{Type: TypeSession})
	nilBus.Close(0)
	if nilBus.Wants(TypeSession) || nilBus.Handler("x") != nil {
		t.Error("nil bus")
	}
}
