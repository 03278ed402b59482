package textroom_test

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// TestTwoUsers: two Pion clients set up, join the sample room, exchange a public and a private
// message, list the participants and leave, as Janus's textroom demo does.
func TestTwoUsers(t *testing.T) {
	c := start(t, nil)
	alice, bob := setup(t, c), setup(t, c)

	r, _ := alice.request("j1", map[string]any{"textroom": "join", "room": 1234, "username": "alice", "display": "Alice"})
	if r["textroom"] != "success" || len(r["participants"].([]any)) != 0 {
		t.Fatalf("alice join: %v", r)
	}
	alice.await("join")
	r, _ = bob.request("j2", map[string]any{"textroom": "join", "room": 1234, "username": "bob"})
	ps := r["participants"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["username"] != "alice" || ps[0].(map[string]any)["display"] != "Alice" {
		t.Fatalf("bob join: %v", r)
	}
	if ev := alice.await("join"); ev["username"] != "bob" || ev["room"] != float64(1234) {
		t.Fatalf("alice saw %v", ev)
	}

	r, _ = alice.request("m1", map[string]any{"textroom": "message", "room": 1234, "text": "hello all"})
	if r["textroom"] != "success" {
		t.Fatalf("message: %v", r)
	}
	if m := bob.await("message"); m["from"] != "alice" || m["text"] != "hello all" || m["whisper"] != nil || m["date"] == "" {
		t.Fatalf("bob got %v", m)
	}
	alice.await("message") // the sender gets its own public message, as in Janus

	r, _ = bob.request("m2", map[string]any{"textroom": "message", "room": 1234, "text": "psst", "to": "alice"})
	if sent := r["sent"].(map[string]any); sent["alice"] != true {
		t.Fatalf("private message: %v", r)
	}
	if m := alice.await("message"); m["from"] != "bob" || m["text"] != "psst" || m["whisper"] != true {
		t.Fatalf("alice got %v", m)
	}
	r, _ = bob.request("m3", map[string]any{"textroom": "message", "room": 1234, "text": "x", "tos": []string{"alice", "carol"}})
	if sent := r["sent"].(map[string]any); sent["alice"] != true || sent["carol"] != false {
		t.Fatalf("tos: %v", r)
	}
	alice.await("message")

	// ack false: no reply; the next request's reply is the next thing bob reads besides his message.
	bob.sendRaw(`{"textroom":"message","transaction":"m4","room":1234,"text":"quiet","ack":false}`)
	r, others := bob.request("l1", map[string]any{"textroom": "listparticipants", "room": 1234})
	for _, o := range others {
		if o["transaction"] == "m4" {
			t.Fatalf("ack false answered: %v", o)
		}
	}
	if len(r["participants"].([]any)) != 2 {
		t.Fatalf("listparticipants: %v", r)
	}
	data, _ := janustest.MustRequest(t, alice.h, map[string]any{"request": "listparticipants", "room": 1234}, nil)
	if len(data["participants"].([]any)) != 2 {
		t.Fatalf("listparticipants over the API: %v", data)
	}

	r, _ = bob.request("x1", map[string]any{"textroom": "leave", "room": 1234})
	if r["textroom"] != "success" {
		t.Fatalf("leave: %v", r)
	}
	if ev := alice.await("leave"); ev["username"] != "bob" {
		t.Fatalf("alice saw %v", ev)
	}
	r, _ = bob.request("m5", map[string]any{"textroom": "message", "room": 1234, "text": "gone"})
	wantError(t, r, 422)
	if !strings.Contains(r["error"].(string), "Not in room 1234") {
		t.Fatalf("wording: %v", r)
	}
}
