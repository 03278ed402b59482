package audiobridge_test

import (
	"testing"
	"time"
)

// TestRoomLifecycle: create, exists, list, join (events to the others), listparticipants,
// mute by a moderator, kick, destroy, with the errors Janus gives on the way.
func TestRoomLifecycle(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	data, _ := mustRequest(t, admin, map[string]any{"request": "create", "room": 42, "secret": "s", "description": "x"}, nil)
	if data["audiobridge"] != "created" || data["room"] != float64(42) {
		t.Fatalf("create: %v", data)
	}
	_, _, err := request(t, admin, map[string]any{"request": "create", "room": 42}, nil)
	wantCode(t, err, 486)
	if data, _ := mustRequest(t, admin, map[string]any{"request": "exists", "room": 42}, nil); data["exists"] != true {
		t.Fatalf("exists: %v", data)
	}

	a, b := attach(t, c), attach(t, c)
	_, _, err = request(t, a, map[string]any{"request": "configure", "muted": true}, nil)
	wantCode(t, err, 487)
	_, _, err = request(t, a, map[string]any{"request": "join", "room": 43}, nil)
	wantCode(t, err, 485)
	_, _, err = request(t, a, map[string]any{"request": "join", "room": 42, "rtp": map[string]any{"ip": "127.0.0.1", "port": 5000}}, nil)
	wantCode(t, err, 489)
	ja, _ := mustRequest(t, a, map[string]any{"request": "join", "room": 42, "display": "A"}, nil)
	_, _, err = request(t, a, map[string]any{"request": "join", "room": 42}, nil)
	wantCode(t, err, 491)
	idA := ja["id"].(float64)
	jb, _ := mustRequest(t, b, map[string]any{"request": "join", "room": 42, "display": "B", "id": 7}, nil)
	if ps := jb["participants"].([]any); len(ps) != 1 || ps[0].(map[string]any)["id"] != idA {
		t.Fatalf("B's joined lists %v, want A", jb)
	}
	ev := waitEvent(t, a, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "joined" })
	if _, has := ev["id"]; has || ev["participants"].([]any)[0].(map[string]any)["display"] != "B" {
		t.Fatalf("A told of B's join with %v: want the participant and no id", ev)
	}
	_, _, err = request(t, admin, map[string]any{"request": "mute", "room": 42, "id": 7, "secret": "wrong"}, nil)
	wantCode(t, err, 489)
	mustRequest(t, admin, map[string]any{"request": "mute", "room": 42, "id": 7, "secret": "s"}, nil)
	waitEvent(t, a, 5*time.Second, func(d map[string]any) bool {
		ps, _ := d["participants"].([]any)
		return d["audiobridge"] == "event" && len(ps) == 1 && ps[0].(map[string]any)["muted"] == true
	})
	lp, _ := mustRequest(t, admin, map[string]any{"request": "listparticipants", "room": 42}, nil)
	if ps := lp["participants"].([]any); len(ps) != 2 {
		t.Fatalf("listparticipants: %v", lp)
	}
	mustRequest(t, admin, map[string]any{"request": "kick", "room": 42, "id": 7, "secret": "s"}, nil)
	waitEvent(t, a, 5*time.Second, func(d map[string]any) bool { return d["kicked"] == float64(7) })
	waitEvent(t, a, 5*time.Second, func(d map[string]any) bool { return d["leaving"] == float64(7) })
	_, _, err = request(t, admin, map[string]any{"request": "kick", "room": 42, "id": 7, "secret": "s"}, nil)
	wantCode(t, err, 492)

	list, _ := mustRequest(t, admin, map[string]any{"request": "list"}, nil)
	found := false
	for _, r := range list["list"].([]any) {
		if r := r.(map[string]any); r["room"] == float64(42) {
			found = r["num_participants"] == float64(1) && r["description"] == "x"
		}
	}
	if !found {
		t.Fatalf("list: %v", list)
	}
	mustRequest(t, admin, map[string]any{"request": "destroy", "room": 42, "secret": "s"}, nil)
	waitEvent(t, a, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "destroyed" })
	_, _, err = request(t, a, map[string]any{"request": "leave"}, nil)
	wantCode(t, err, 487)
}
