package audiobridge

import (
	"encoding/json"
	"testing"
)

// FuzzOwnerRequest: any bytes from another node either decode into a request that names a room
// and an operation the owner knows, with settings a participant's request could carry, or are
// refused with an error; what is accepted survives encoding again.
func FuzzOwnerRequest(f *testing.F) {
	for _, seed := range []string{
		`{"op":"join","room":1234,"join":{"Room":1234,"Display":"x","Prebuffer":6}}`,
		`{"op":"configure","room":1,"id":7,"configure":{"Muted":true,"Volume":-1}}`,
		`{"op":"request","room":1,"body":{"request":"listparticipants","room":1}}`,
		`{"op":"sync","room":1,"seats":[{"join":{"ID":3},"participant":{"Codec":"opus","Quality":4}}]}`,
		`{"op":"media","room":1}`, `{"op":"leave","room":1,"id":2}`, `null`, `{`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := decodeOwnerRequest(raw)
		if err != nil {
			return
		}
		if req.Room == 0 && req.Op != opRooms {
			t.Fatalf("accepted %q without a room", raw)
		}
		switch req.Op {
		case opJoin:
			if req.Join == nil || req.Join.Settings.check() != nil {
				t.Fatalf("accepted join %q", raw)
			}
		case opSync:
			for _, s := range req.Seats {
				if s.Join.ID == 0 || s.Participant.check() != nil {
					t.Fatalf("accepted seat %+v", s)
				}
			}
		case opConfigure, opSetup, opMedia, opLeave, opReset:
			if req.ID == 0 {
				t.Fatalf("accepted %s %q without a participant", req.Op, raw)
			}
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeOwnerRequest(again); err != nil {
			t.Fatalf("%q decoded, encoded as %s, refused: %v", raw, again, err)
		}
	})
}

// FuzzRoomEvents: the owner's events on a room's topic either decode into an event object for a
// room (a drop for a participant of a node, a roster for a room) or are refused.
func FuzzRoomEvents(f *testing.F) {
	for _, seed := range []string{
		`{"room":1234,"except":5,"data":{"audiobridge":"joined"}}`, `{"room":1,"data":[]}`,
		`{"room":1,"node":"n","id":3,"data":{"audiobridge":"event"},"close":true}`, `{"room":1,"node":"","id":3}`, `{`,
		`{"room":9,"options":{"SamplingRate":16000,"DefaultPrebuffering":6}}`, `{"room":9,"options":{"SamplingRate":7}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if ev, err := decodeRoomEvent(raw); err == nil {
			var data map[string]json.RawMessage
			if ev.Room == 0 || json.Unmarshal(ev.Data, &data) != nil {
				t.Fatalf("accepted event %q", raw)
			}
		}
		if ev, err := decodeDropEvent(raw); err == nil && (ev.Room == 0 || ev.ID == 0 || ev.Node == "") {
			t.Fatalf("accepted drop %q", raw)
		}
		if ev, err := decodeRosterEvent(raw); err == nil && ev.Room == 0 {
			t.Fatalf("accepted roster %q", raw)
		}
		if w, err := decodeWireRoom(raw, true); err == nil && (w.Room == 0 || !SupportedSamplingRate(w.Options.SamplingRate)) {
			t.Fatalf("accepted room %q", raw)
		}
	})
}
