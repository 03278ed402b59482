package textroom_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
)

// TestDetachLeaves: a participant whose handle goes away leaves its rooms; the others see it.
func TestDetachLeaves(t *testing.T) {
	c := start(t, nil)
	alice, bob := setup(t, c), setup(t, c)
	alice.request("a", map[string]any{"textroom": "join", "room": 1234, "username": "alice"})
	bob.request("b", map[string]any{"textroom": "join", "room": 1234, "username": "bob"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := bob.h.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := alice.await("leave"); ev["username"] != "bob" {
		t.Fatalf("alice saw %v", ev)
	}
	r, _ := alice.request("l", map[string]any{"textroom": "listparticipants", "room": 1234})
	if ps := r["participants"].([]any); len(ps) != 1 {
		t.Fatalf("participants after detach: %v", r)
	}
	// bob's name is free again.
	carol := setup(t, c)
	if r, _ := carol.request("c", map[string]any{"textroom": "join", "room": 1234, "username": "bob"}); r["textroom"] != "success" {
		t.Fatalf("join as bob after bob left: %v", r)
	}
}

// TestHistory: a room with history sends a new participant its last public messages (with the
// sender's display), unless join says history false.
func TestHistory(t *testing.T) {
	c := start(t, func(tr *config.TextRoom) { tr.Rooms[0].History = 2 })
	alice := setup(t, c)
	alice.request("a", map[string]any{"textroom": "join", "room": 1234, "username": "alice", "display": "Alice"})
	for _, text := range []string{"one", "two", "three"} {
		alice.request(text, map[string]any{"textroom": "message", "room": 1234, "text": text})
	}
	bob := setup(t, c)
	_, before := bob.request("b", map[string]any{"textroom": "join", "room": 1234, "username": "bob"})
	if len(before) < 2 || before[0]["text"] != "two" || before[1]["text"] != "three" || before[0]["display"] != "Alice" {
		t.Fatalf("history: %v", before)
	}
	carol := setup(t, c)
	_, before = carol.request("c", map[string]any{"textroom": "join", "room": 1234, "username": "carol", "history": false})
	for _, m := range before {
		if m["textroom"] == "message" {
			t.Fatalf("history sent despite history false: %v", before)
		}
	}
}
