package streaming_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// onlyAcked sends a request that Janus acks and then answers with nothing: no event comes for it
// within a while.
func onlyAcked(t *testing.T, h *janusclient.Handle, body map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if ev, err := h.Message(ctx, body, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v was answered: %+v, %v", body, ev, err)
	}
}

// TestStop follows Janus 1.1.2's stop: ignored (acked, nothing more) before the PeerConnection is
// up; once it is, "stopping" and a hangup with the core's "Close PC", and no "stopped" (Janus says
// that only when a mountpoint goes away); a second stop is ignored too.
func TestStop(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "audio", "mid": "a", "port": 0, "pt": 111, "codec": "opus"})

	early := attach(t, c)
	if data, offer := request(t, early, map[string]any{"request": "watch", "id": mp.id}, nil); status(data) != "preparing" || offer == nil {
		t.Fatalf("watch: %v", data)
	}
	onlyAcked(t, early, map[string]any{"request": "stop"})
	info, _ := request(t, admin, map[string]any{"request": "info", "id": mp.id}, nil)
	if n := info["info"].(map[string]any)["viewers"]; n != float64(1) {
		t.Errorf("after a stop before the PeerConnection was up: %v viewers, want 1 (the stop ignored)", n)
	}

	v := watch(t, c, mp.id, nil)
	v.waitEvent(10*time.Second, func(e map[string]any) bool { return status(e) == "started" })
	data, _ := request(t, v.h, map[string]any{"request": "stop"}, nil)
	if status(data) != "stopping" {
		t.Errorf("stop: %v", data)
	}
	hangup := v.waitEvent(10*time.Second, func(e map[string]any) bool { return e["janus"] == "hangup" })
	if hangup["reason"] != "Close PC" {
		t.Errorf("hangup reason %q, want Janus's %q", hangup["reason"], "Close PC")
	}
	onlyAcked(t, v.h, map[string]any{"request": "stop"})
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.events {
		if s := status(e); s == "stopped" || s == "stopping" {
			t.Errorf("event %v after stop; Janus sends none", e)
		}
	}
}

// TestNamesAndAge: a mountpoint created without a name is "mp-<id>", one whose name starts with a
// number gets the "mp-" prefix, as in Janus; a stream that has received nothing has age_ms since
// the mountpoint was created, in info and list.
func TestNamesAndAge(t *testing.T) {
	c := startServer(t, nil)
	h := attach(t, c)
	media := []map[string]any{{"type": "audio", "mid": "a", "port": 0, "pt": 111, "codec": "opus"}}
	created, _ := request(t, h, map[string]any{"request": "create", "type": "rtp", "id": 7, "media": media}, nil)
	if created["created"] != "mp-7" {
		t.Errorf("created %v, want mp-7", created["created"])
	}
	named, _ := request(t, h, map[string]any{"request": "create", "type": "rtp", "id": 8, "name": "8cams", "media": media}, nil)
	if named["created"] != "mp-8cams" {
		t.Errorf("created %v, want mp-8cams", named["created"])
	}
	time.Sleep(300 * time.Millisecond)
	info, _ := request(t, h, map[string]any{"request": "info", "id": 7}, nil)
	i := info["info"].(map[string]any)
	if i["name"] != "mp-7" || i["description"] != "mp-7" {
		t.Errorf("info name %v, description %v, want mp-7", i["name"], i["description"])
	}
	if age, ok := i["media"].([]any)[0].(map[string]any)["age_ms"].(float64); !ok || age < 300 {
		t.Errorf("info age_ms %v of a stream that received nothing, want the time since creation (≥ 300)", age)
	}
	list, _ := request(t, h, map[string]any{"request": "list"}, nil)
	for _, e := range list["list"].([]any) {
		m := e.(map[string]any)["media"].([]any)[0].(map[string]any)
		if age, ok := m["age_ms"].(float64); !ok || age < 300 {
			t.Errorf("list age_ms %v of a stream that received nothing, want ≥ 300", m["age_ms"])
		}
	}
}
