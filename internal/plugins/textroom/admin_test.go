package textroom

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// TestAdminMessage: the admin API's message_plugin answers the management requests, and refuses
// the others with Janus's code.
func TestAdminMessage(t *testing.T) {
	p := New(config.TextRoom{MaxMessageSize: 1024, AdminKey: "k", Rooms: []config.TextRoomRoom{{ID: "1234", Secret: "s", IsPrivate: true}}}, nil)
	ask := func(body string) map[string]any {
		return p.AdminMessage(context.Background(), json.RawMessage(body)).(map[string]any)
	}
	if r := ask(`{"request":"exists","room":1234}`); r["exists"] != true {
		t.Fatalf("exists: %v", r)
	}
	if r := ask(`{"request":"list"}`); len(r["list"].([]any)) != 0 {
		t.Fatalf("private room listed without the admin key: %v", r)
	}
	if r := ask(`{"request":"list","admin_key":"k"}`); len(r["list"].([]any)) != 1 {
		t.Fatalf("private room not listed with the admin key: %v", r)
	}
	if r := ask(`{"request":"create","room":5}`); r["error_code"] != ErrMissingElement {
		t.Fatalf("create without admin_key: %v", r)
	}
	if r := ask(`{"request":"create","room":5,"admin_key":"no"}`); r["error_code"] != ErrUnauthorized {
		t.Fatalf("create with a wrong admin_key: %v", r)
	}
	if r := ask(`{"request":"create","room":5,"admin_key":"k","post":"http://example.com/"}`); r["textroom"] != "created" {
		t.Fatalf("create: %v", r)
	}
	if r := ask(`{"request":"join","room":5,"username":"x"}`); r["error_code"] != ErrInvalidRequest {
		t.Fatalf("join over the admin API: %v", r)
	}
	if r := ask(`[]`); r["error_code"] != ErrInvalidJSON {
		t.Fatalf("not an object: %v", r)
	}
}
