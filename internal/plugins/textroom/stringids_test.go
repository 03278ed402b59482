package textroom_test

import (
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// TestStringIDs: with string_ids, rooms are named by strings in requests, replies and events;
// a number for "room" is refused with Janus's wording, and create without an id picks a string.
func TestStringIDs(t *testing.T) {
	c := start(t, func(tr *config.TextRoom) {
		tr.StringIDs = true
		tr.Rooms[0].ID = "lobby"
	})
	alice, bob := setup(t, c), setup(t, c)
	if r, _ := alice.request("a", map[string]any{"textroom": "join", "room": "lobby", "username": "alice"}); r["textroom"] != "success" {
		t.Fatalf("join lobby: %v", r)
	}
	r, _ := bob.request("n", map[string]any{"textroom": "join", "room": 1234, "username": "bob"})
	wantError(t, r, 414)
	if r["error"] != "Invalid element type (room should be a string)" {
		t.Fatalf("wording: %v", r)
	}
	r, _ = bob.request("x", map[string]any{"textroom": "join", "room": "nowhere", "username": "bob"})
	wantError(t, r, 417)
	if r["error"] != "No such room (nowhere)" {
		t.Fatalf("wording: %v", r)
	}
	bob.request("b", map[string]any{"textroom": "join", "room": "lobby", "username": "bob"})
	alice.request("m", map[string]any{"textroom": "message", "room": "lobby", "text": "hi"})
	if m := bob.await("message"); m["room"] != "lobby" || m["text"] != "hi" {
		t.Fatalf("bob got %v", m)
	}

	h := janustest.Attach(t, c, "janus.plugin.textroom")
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "create"}, nil)
	id, ok := data["room"].(string)
	if data["textroom"] != "created" || !ok || id == "" {
		t.Fatalf("create: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "exists", "room": id}, nil)
	if data["exists"] != true || data["room"] != id {
		t.Fatalf("exists: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "list"}, nil)
	if len(data["list"].([]any)) != 2 {
		t.Fatalf("list: %v", data)
	}
	for _, rm := range data["list"].([]any) {
		if _, ok := rm.(map[string]any)["room"].(string); !ok {
			t.Fatalf("numeric id in list: %v", data)
		}
	}
}
