package textroom

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// FuzzRequest feeds arbitrary data channel messages to the parser and to the request handlers of a
// session that is in no room: nothing panics, every answer is a reply with a known shape, and what
// fails parsing gets one of the parser's codes.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"textroom":"join","transaction":"t","room":1234,"username":"a","display":"A"}`,
		`{"textroom":"message","transaction":"t","room":1234,"text":"hi","tos":["a",1]}`,
		`{"textroom":"message","transaction":"t","room":1234,"text":"hi","to":"a","tos":["b"]}`,
		`{"textroom":"create","transaction":"t","room":5,"allowed":["x"],"history":3}`,
		`{"textroom":"allowed","transaction":"t","room":1234,"action":"add","allowed":[1]}`,
		`{"textroom":"list","transaction":"t","admin_key":""}`,
		`{"textroom":"destroy","transaction":"t","room":1234,"secret":"s"}`,
		`{"textroom":"leave","transaction":7}`, `{"textroom":`, `[]`, `null`, ``, `"x"`,
		`{"textroom":"exists","transaction":"t","room":-1}`, `{"textroom":"create","transaction":"t","room":"","post":"http://[::1"}`,
		`{"textroom":"join","transaction":"t","room":"1234","username":"b"}`, `{"textroom":"kick","transaction":"t","room":1.5}`,
	} {
		f.Add([]byte(seed))
	}
	// One plugin per id mode: integer ids, and string_ids.
	var sessions []*session
	for _, strIDs := range []bool{false, true} {
		p := New(config.TextRoom{MaxMessageSize: 4096, StringIDs: strIDs, Rooms: []config.TextRoomRoom{{ID: "1234", Secret: "s"}}}, nil)
		f.Cleanup(p.Destroy)
		sessions = append(sessions, &session{p: p, rooms: map[string]*participant{}})
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := parseRequest(raw, 4096)
		if err != nil {
			if err.Code < ErrNoMessage || err.Code > ErrInvalidElement {
				t.Fatalf("parse code %d for %q", err.Code, raw)
			}
			return
		}
		if !strings.Contains(string(raw), "textroom") {
			t.Fatalf("parsed without textroom: %q", raw)
		}
		for _, s := range sessions {
			reply := s.request(raw)
			if reply == nil {
				continue // a message with ack false
			}
			if reply["transaction"] != req.transaction {
				t.Fatalf("reply %v lost transaction %q", reply, req.transaction)
			}
		}
	})
}
