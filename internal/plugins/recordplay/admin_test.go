package recordplay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/record"
)

// The admin API's message_plugin takes `update`, as Janus's; anything else is refused with
// Janus's codes. A recordings directory that does not exist yet lists nothing.
func TestAdminUpdate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	p, err := New(config.RecordPlay{Enabled: true, Path: dir}, record.SessionOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := p.listReply()["list"].([]map[string]any); len(l) != 0 {
		t.Fatalf("listed %v", l)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	nfo := "[3]\nname = n\ndate = d\naudio = a.mjr\n"
	if err := os.WriteFile(filepath.Join(dir, "3.nfo"), []byte(nfo), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]map[string]any{
		`{"request":"update"}`: {short: "ok"},
		`{"request":"list"}`:   {short: "event", "error_code": ErrInvalidRequest, "error": "Unknown request 'list'"},
		`{}`:                   {short: "event", "error_code": ErrMissingElement, "error": "Missing mandatory element (request)"},
		`[1]`:                  {short: "event", "error_code": ErrInvalidJSON, "error": "JSON error: not an object"},
	}
	for in, want := range cases {
		got := p.AdminMessage(context.Background(), json.RawMessage(in))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
	if l := p.listReply()["list"].([]map[string]any); len(l) != 1 || l[0]["id"] != uint64(3) || l[0]["audio_error"] == nil {
		t.Errorf("after update: %v", l)
	}
}
