package textroom_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestBadInput: over the data channel, messages that are not JSON, not objects, lack the
// transaction, or exceed max_message_size (the default, 64 KiB) get Janus's error replies (412,
// 413) on the sender's channel only; binary messages are dropped as Janus drops them. The other
// participant sees none of it, and both keep talking over the same channels.
func TestBadInput(t *testing.T) {
	c := start(t, nil)
	alice, bob := setup(t, c), setup(t, c)
	alice.request("ja", map[string]any{"textroom": "join", "room": 1234, "username": "alice"})
	bob.request("jb", map[string]any{"textroom": "join", "room": 1234, "username": "bob"})
	bob.pending = nil   // his own join event
	alice.await("join") // her own
	if ev := alice.await("join"); ev["username"] != "bob" {
		t.Fatalf("alice saw %v", ev)
	}

	huge := `{"textroom":"message","transaction":"h","room":1234,"text":"` + strings.Repeat("y", 70000) + `"}`
	for _, tc := range []struct {
		raw, words string
		code       int
	}{
		{"hello, not json", "JSON error", 412},
		{`{"textroom":"message"`, "JSON error", 412},
		{`["textroom"]`, "JSON error: not an object", 412},
		{`{"textroom":"message","room":1234,"text":"no transaction"}`, "Missing mandatory element (transaction)", 413},
		{huge, fmt.Sprintf("message too large (%d bytes, at most 65536)", len(huge)), 412},
	} {
		bob.sendRaw(tc.raw)
		r := bob.next()
		wantError(t, r, tc.code)
		if !strings.Contains(r["error"].(string), tc.words) {
			t.Errorf("%.30q: %q, want %q", tc.raw, r["error"], tc.words)
		}
	}
	if err := bob.dc.Send([]byte(`{"textroom":"message","transaction":"bin","room":1234,"text":"binary"}`)); err != nil {
		t.Fatal(err)
	}

	// The binary message was dropped without a reply: bob's next message is the first to arrive.
	r, before := bob.request("after", map[string]any{"textroom": "message", "room": 1234, "text": "still here"})
	if r["textroom"] != "success" {
		t.Fatalf("bob after bad input: %v", r)
	}
	for _, m := range before {
		if m["transaction"] == "bin" || m["text"] == "binary" {
			t.Fatalf("binary message answered or relayed: %v", m)
		}
	}
	if m := alice.await("message"); m["text"] != "still here" || m["from"] != "bob" {
		t.Fatalf("alice's first message after bob's bad input: %v", m)
	}
	alice.request("back", map[string]any{"textroom": "message", "room": 1234, "text": "welcome back", "to": "bob"})
	m := bob.await("message")
	if m["text"] == "still here" { // his own, as everyone in the room gets it
		m = bob.await("message")
	}
	if m["text"] != "welcome back" || m["whisper"] != true {
		t.Fatalf("bob got %v", m)
	}
}
