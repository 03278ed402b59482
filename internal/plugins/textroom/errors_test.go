package textroom_test

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// TestErrors: Janus's codes and wording for the data channel requests that fail, and the session
// keeps working after each.
func TestErrors(t *testing.T) {
	c := start(t, func(tr *config.TextRoom) {
		tr.MaxMessageSize = 1024
		tr.Rooms = append(tr.Rooms, config.TextRoomRoom{ID: "77", Description: "pinned", PIN: "roompwd", Secret: "s77"})
	})
	alice, bob := setup(t, c), setup(t, c)
	cases := []struct {
		name  string
		body  map[string]any
		code  int
		words string
	}{
		{"unknown room", map[string]any{"textroom": "join", "room": 999, "username": "a"}, 417, "No such room (999)"},
		{"no pin", map[string]any{"textroom": "join", "room": 77, "username": "a"}, 413, "Missing mandatory element (pin)"},
		{"wrong pin", map[string]any{"textroom": "join", "room": 77, "username": "a", "pin": "x"}, 419, "Unauthorized (wrong pin)"},
		{"no username", map[string]any{"textroom": "join", "room": 1234}, 413, "Missing mandatory element (username)"},
		{"bad room type", map[string]any{"textroom": "join", "room": "1234", "username": "a"}, 414, "Invalid element type (room should be a positive integer)"},
		{"wrong secret", map[string]any{"textroom": "destroy", "room": 1234, "secret": "nope"}, 419, "Unauthorized (wrong secret)"},
		{"unknown request", map[string]any{"textroom": "dance"}, 415, "Unsupported request dance"},
		{"not in room", map[string]any{"textroom": "leave", "room": 1234}, 422, "Not in room 1234"},
		{"no such user", map[string]any{"textroom": "kick", "room": 1234, "secret": roomSecret, "username": "zed"}, 423, "No such user zed in room 1234"},
		{"room exists", map[string]any{"textroom": "create", "room": 1234}, 418, "Room 1234 already exists"},
		{"permanent", map[string]any{"textroom": "create", "permanent": true}, 499, "can't create permanent room"},
	}
	for _, tc := range cases {
		r, _ := alice.request(tc.name, tc.body)
		wantError(t, r, tc.code)
		if !strings.Contains(r["error"].(string), tc.words) {
			t.Errorf("%s: %q, want %q", tc.name, r["error"], tc.words)
		}
	}

	if r, _ := alice.request("ja", map[string]any{"textroom": "join", "room": 77, "username": "alice", "pin": "roompwd"}); r["textroom"] != "success" {
		t.Fatalf("join with pin: %v", r)
	}
	r, _ := alice.request("jb", map[string]any{"textroom": "join", "room": 77, "username": "alice2", "pin": "roompwd"})
	wantError(t, r, 421)
	r, _ = bob.request("jc", map[string]any{"textroom": "join", "room": 77, "username": "alice", "pin": "roompwd"})
	wantError(t, r, 420)
	if r["error"] != "Username already taken" {
		t.Fatalf("wording: %v", r)
	}

	// Not JSON, not an object, no transaction, oversized: an error each, nothing else happens.
	for raw, code := range map[string]int{
		`{"textroom":`:                     412,
		`[1,2]`:                            412,
		`null`:                             411,
		`{"textroom":"list"}`:              413,
		`{"textroom":1,"transaction":"t"}`: 414,
		`{"textroom":"list","transaction":"t","pad":"` + strings.Repeat("x", 2000) + `"}`: 412,
	} {
		bob.sendRaw(raw)
		wantError(t, bob.next(), code)
	}
	// Still serving: bob joins, alice sees it.
	if r, _ := bob.request("jd", map[string]any{"textroom": "join", "room": 77, "username": "bob", "pin": "roompwd"}); r["textroom"] != "success" {
		t.Fatalf("bob join after bad input: %v", r)
	}
	for ev := alice.await("join"); ev["username"] != "bob"; ev = alice.await("join") {
		if ev["username"] != "alice" {
			t.Fatalf("alice saw %v", ev)
		}
	}
}

// TestSetupErrors: restart before setup, setup twice, and a restart's new offer, with Janus's codes.
func TestSetupErrors(t *testing.T) {
	c := start(t, nil)
	h := janustest.Attach(t, c, "janus.plugin.textroom")
	_, _, err := janustest.Request(t, h, map[string]any{"request": "restart"}, nil)
	janustest.WantCode(t, err, 416)
	u := setup(t, c)
	_, _, err = janustest.Request(t, u.h, map[string]any{"request": "setup"}, nil)
	janustest.WantCode(t, err, 416)
	data, offer := janustest.MustRequest(t, u.h, map[string]any{"request": "restart"}, nil)
	if data["result"] != "ok" || offer == nil || offer.Type != "offer" {
		t.Fatalf("restart: %v %v", data, offer)
	}
	_, _, err = janustest.Request(t, u.h, map[string]any{"request": "dance"}, nil)
	janustest.WantCode(t, err, 415)
}

// TestAPI: the management requests over the plugin API, answered synchronously, and the events the
// participants get from them.
func TestAPI(t *testing.T) {
	c := start(t, nil)
	alice := setup(t, c)
	h := janustest.Attach(t, c, "janus.plugin.textroom")
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "create", "room": 42, "description": "api", "secret": "s", "is_private": true, "post": "http://127.0.0.1:1/x"}, nil)
	if data["textroom"] != "created" || data["room"] != float64(42) {
		t.Fatalf("create: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "exists", "room": 42}, nil)
	if data["exists"] != true {
		t.Fatalf("exists: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "list"}, nil)
	for _, r := range data["list"].([]any) {
		if r.(map[string]any)["room"] == float64(42) {
			t.Fatalf("private room listed: %v", data)
		}
	}
	_, _, err := janustest.Request(t, h, map[string]any{"request": "edit", "room": 42, "secret": "bad"}, nil)
	janustest.WantCode(t, err, 419)
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "edit", "room": 42, "secret": "s", "new_is_private": false}, nil)
	if data["textroom"] != "edited" {
		t.Fatalf("edit: %v", data)
	}
	_, _, err = janustest.Request(t, h, map[string]any{"request": "join", "room": 42, "username": "x"}, nil)
	janustest.WantCode(t, err, 415)

	if r, _ := alice.request("j", map[string]any{"textroom": "join", "room": 42, "username": "alice"}); r["textroom"] != "success" {
		t.Fatalf("join: %v", r)
	}
	janustest.MustRequest(t, h, map[string]any{"request": "announcement", "room": 42, "secret": "s", "text": "hear ye"}, nil)
	if m := alice.await("announcement"); m["text"] != "hear ye" {
		t.Fatalf("announcement: %v", m)
	}
	janustest.MustRequest(t, h, map[string]any{"request": "allowed", "room": 42, "secret": "s", "action": "enable"}, nil)
	janustest.MustRequest(t, h, map[string]any{"request": "kick", "room": 42, "secret": "s", "username": "alice"}, nil)
	if m := alice.await("kicked"); m["username"] != "alice" {
		t.Fatalf("kicked: %v", m)
	}
	r, _ := alice.request("j2", map[string]any{"textroom": "join", "room": 42, "username": "alice"})
	wantError(t, r, 419) // tokens are checked now
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "destroy", "room": 42, "secret": "s"}, nil)
	if data["textroom"] != "destroyed" {
		t.Fatalf("destroy: %v", data)
	}
	_, _, err = janustest.Request(t, h, map[string]any{"request": "listparticipants", "room": 42}, nil)
	janustest.WantCode(t, err, 417)
}
