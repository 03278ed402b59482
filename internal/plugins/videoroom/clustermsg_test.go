package videoroom

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzClusterMessages feeds arbitrary bytes to the decoders of what other nodes send: a request
// to a room's owner and every kind of room event. Nothing panics, and what is accepted is within
// the bounds and encodes again.
func FuzzClusterMessages(f *testing.F) {
	for _, seed := range []string{
		`{"op":"join","room":1234,"member":{"id":0,"display":"a"}}`,
		`{"op":"update","room":1234,"member":{"id":7,"active":true,"streams":[{"mid":"0","mindex":0,"kind":"video","codec":"vp8","simulcast":true}]}}`,
		`{"op":"sync","room":1,"members":[{"id":3,"node":"n2"}],"options":{"publishers":3,"videocodecs":["vp8"]}}`,
		`{"op":"event","room":1,"body":{"videoroom":"event","unpublished":3}}`,
		`{"op":"admin","room":1,"body":{"request":"kick","room":1,"id":3}}`,
		`{"op":"forward","room":1,"body":{"request":"listforwarders","room":1}}`,
		`{"op":"rooms"}`, `{"op":"leave","room":1,"member":{"id":0}}`, `{"op":"nope","room":1}`,
		`{"id":3,"node":"n1","streams":[{"mid":"a","kind":"audio","codec":"opus"}]}`,
		`{"id":3,"node":"n1","active":true,"streams":[{"mid":"0","kind":"audio","codec":"opus"},{"mid":"1","mindex":1,"kind":"data"}]}`,
		`{"room":1,"options":{"publishers":2},"nodes":["n1"],"members":[{"id":1,"node":"n1"}]}`,
		`{"action":"moderate","id":4,"mid":"1","mute":true}`, `{"action":"destroy"}`,
		`{"node":"n2","event":{"videoroom":"event","room":1,"publishers":[]}}`, `[]`, `null`, `{"id":1,"node":"x","extra":1}`,
	} {
		f.Add([]byte(seed), uint8(0))
	}
	kinds := []string{evMember, evEvent, evState, evNotice, evCreated, "unknown"}
	f.Fuzz(func(t *testing.T, raw []byte, kind uint8) {
		if req, err := decodeOwnerRequest(raw); err == nil {
			if req.Op != opRooms && req.Room == 0 {
				t.Fatalf("accepted a request without a room: %s", raw)
			}
			if req.Member != nil && len(req.Member.Streams) > maxWireStreams {
				t.Fatalf("accepted %d streams", len(req.Member.Streams))
			}
			if _, err := json.Marshal(req); err != nil {
				t.Fatal(err)
			}
		}
		k := kinds[int(kind)%len(kinds)]
		v, err := decodeRoomEvent(k, raw)
		if err != nil {
			return
		}
		switch v := v.(type) {
		case wireMember:
			if v.ID == 0 || v.Node == "" {
				t.Fatalf("accepted a member without id or node: %s", raw)
			}
		case wireState:
			_ = v.Options.options() // defaults filled without a panic
		case wireNotice:
			if v.Action != noticeDestroy && v.ID == 0 {
				t.Fatalf("accepted a notice without a participant: %s", raw)
			}
		}
	})
}

// TestClusterMessagesRefused: what other nodes may not send gets a clear error.
func TestClusterMessagesRefused(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"op":"join","member":{"id":1}}`, "no room"},
		{`{"op":"update","room":1,"member":{"id":0}}`, "without an id"},
		{`{"op":"update","room":1,"member":{"id":2,"streams":[{"mid":"0","kind":"video","codec":"h999"}]}}`, "unknown codec"},
		{`{"op":"update","room":1,"member":{"id":2,"streams":[{"mid":"0","kind":"text","codec":"vp8"}]}}`, "kind"},
		{`{"op":"update","room":1,"member":{"id":2,"streams":[{"mid":"0","kind":"video","codec":"vp8"},{"mid":"0","kind":"video","codec":"vp8"}]}}`, "repeated"},
		{`{"op":"update","room":1,"member":{"id":2,"streams":[{"mid":"0","kind":"data","codec":"vp8"}]}}`, "data stream"},
		{`{"op":"update","room":1,"member":{"id":2,"streams":[{"mid":"0","kind":"data"},{"mid":"1","kind":"data"}]}}`, "data stream"},
		{`{"op":"event","room":1,"body":[1]}`, "JSON object"},
		{`{"op":"sync","room":1,"members":[],"surprise":true}`, "unknown field"},
		{`{"op":"launch","room":1}`, "unknown operation"},
		{`{"op":"rooms"} {"op":"rooms"}`, "trailing"},
		{`{"op":"update","room":1,"member":{"id":2,"display":"` + strings.Repeat("x", maxWireText+1) + `"}}`, "display"},
	} {
		if _, err := decodeOwnerRequest([]byte(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.80s: error %v, want one saying %q", tc.raw, err, tc.want)
		}
	}
	for _, tc := range []struct{ kind, raw, want string }{
		{evMember, `{"id":1}`, "without an id or node"},
		{evNotice, `{"action":"kick"}`, "without an id"},
		{evNotice, `{"action":"explode","id":1}`, "unknown action"},
		{evState, `{"room":0,"options":{},"nodes":[],"members":[]}`, "no room"},
		{evEvent, `"text"`, "cannot unmarshal"},
		{evEvent, `{"node":"n1","event":[1]}`, "cannot unmarshal"},
		{evEvent, `{"event":{}}`, "no node"},
		{"other", `{}`, "unknown kind"},
	} {
		if _, err := decodeRoomEvent(tc.kind, []byte(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: error %v, want one saying %q", tc.kind, tc.raw, err, tc.want)
		}
	}
}

// TestWireOptionsRoundTrip: a room's options cross nodes unchanged.
func TestWireOptionsRoundTrip(t *testing.T) {
	o := roomOptions{description: "d", secret: "s", pin: "p", isPrivate: true, publishers: 6, bitrate: 512000,
		bitrateCap: true, firFreq: 10, audioCodecs: []string{"opus"}, videoCodecs: []string{"vp9", "vp8"}, opusFEC: true,
		audioLevelEvent: true, audioActivePackets: 50, audioLevelAverage: 40, notifyJoining: true, requirePvtID: true,
		record: true, recDir: "/tmp", lockRecord: true, checkAllowed: true, allowed: []string{"a"}, policy: "bwe"}
	raw, err := json.Marshal(o.wire())
	if err != nil {
		t.Fatal(err)
	}
	var w wireOptions
	if err := decodeStrict(raw, &w); err != nil {
		t.Fatal(err)
	}
	got := w.options()
	if !reflect.DeepEqual(got, o) {
		t.Fatalf("options changed crossing nodes:\n got %+v\nwant %+v", got, o)
	}
}
