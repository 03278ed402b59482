package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestTextRoomIDs: integer room ids must be plain positive decimals unless string_ids is on; ids
// are unique; a backend must be an http(s) URL.
func TestTextRoomIDs(t *testing.T) {
	rooms := "plugins:\n  textroom:\n    string_ids: %s\n    rooms:\n      - id: %s\n        post: %q\n"
	cases := []struct {
		strIDs, id, post string
		bad              string // "" when the file is valid
	}{
		{"false", "1234", "", ""},
		{"false", "lobby", "", "not a positive integer"},
		{"false", "0", "", "not a positive integer"},
		{"false", "0x10", "", "not a positive integer"},
		{"false", "007", "", "not a positive integer"},
		{"true", "lobby", "https://example.com/tr", ""},
		{"true", `""`, "", "empty room id"},
		{"false", "1", "ftp://example.com", "not an http(s) URL"},
		{"false", "1", "/relative", "not an http(s) URL"},
	}
	for _, c := range cases {
		text := fmt.Sprintf(rooms, c.strIDs, c.id, c.post)
		cfg, err := Parse([]byte(text), "t.yaml")
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s/%s refused: %v", c.strIDs, c.id, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%s/%s/%s: %v, want %q", c.strIDs, c.id, c.post, err, c.bad)
		case c.bad == "" && cfg.Plugins.TextRoom.Rooms[0].ID != strings.Trim(c.id, `"`):
			t.Errorf("id %q read as %q", c.id, cfg.Plugins.TextRoom.Rooms[0].ID)
		}
	}
	if _, err := Parse([]byte("plugins:\n  textroom:\n    rooms:\n      - id: 5\n      - id: 5\n"), "t.yaml"); err == nil {
		t.Error("repeated id accepted")
	}
	if _, err := Parse([]byte("plugins:\n  textroom:\n    post:\n      workers: 0\n"), "t.yaml"); err == nil {
		t.Error("no post workers accepted")
	}
}
