package audiobridge

import (
	"encoding/json"
	"reflect"
	"testing"
)

// failure is what Janus 1.1.2 answers a bad request with (error_code and error).
type failure struct {
	code   int
	reason string
}

// TestParseErrors: each malformed request gets Janus's code and, word for word, Janus's reason. The
// table follows Janus's parameter tables, so where a request has several faults the first in
// Janus's order is the one reported.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		body string
		want failure
	}{
		// The envelope.
		{``, failure{480, "No message??"}},
		{`null`, failure{480, "No message??"}},
		{`[1]`, failure{481, "JSON error: not an object"}},
		{`"join"`, failure{481, "JSON error: not an object"}},
		{`{}`, failure{483, "Missing mandatory element (request)"}},
		{`{"request":7}`, failure{484, "Invalid element type (request should be a string)"}},
		{`{"request":null}`, failure{484, "Invalid element type (request should be a string)"}},
		{`{"request":"dance"}`, failure{482, "Unknown request 'dance'"}},
		{`{"request":"suspend","room":1,"id":2}`, failure{482, "Unknown request 'suspend'"}},
		{`{"request":"listannouncements","room":1}`, failure{482, "Unknown request 'listannouncements'"}},
		// Rooms and ids.
		{`{"request":"exists"}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"exists","room":"1234"}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"exists","room":-1}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"exists","room":1.5}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"exists","room":1e3}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"exists","room":99999999999999999999}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"listparticipants","room":null}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"kick","room":1}`, failure{483, "Missing mandatory element (id)"}},
		{`{"request":"mute","room":1,"id":true}`, failure{484, "Invalid element type (id should be a positive integer)"}},
		{`{"request":"unmute","secret":5,"id":"x"}`, failure{484, "Invalid element type (secret should be a string)"}},
		{`{"request":"kick_all"}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"mute_room","room":1,"secret":false}`, failure{484, "Invalid element type (secret should be a string)"}},
		{`{"request":"unmute_room","room":"1"}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"listforwarders"}`, failure{483, "Missing mandatory element (room)"}},
		// create: its table before the room.
		{`{"request":"create","room":"x","description":3}`, failure{484, "Invalid element type (description should be a string)"}},
		{`{"request":"create","room":"x"}`, failure{484, "Invalid element type (room should be a positive integer)"}},
		{`{"request":"create","sampling_rate":-16000}`, failure{484, "Invalid element type (sampling_rate should be a positive integer)"}},
		{`{"request":"create","spatial_audio":"yes"}`, failure{484, "Invalid element type (spatial_audio should be a boolean)"}},
		{`{"request":"create","allowed":"tok"}`, failure{484, "Invalid element type (allowed should be an array)"}},
		{`{"request":"create","allowed":["a",1]}`, failure{484, "Invalid element in the allowed array (not a string)"}},
		{`{"request":"create","groups":["a",null]}`, failure{484, "Invalid element in the groups array (not a string)"}},
		{`{"request":"create","groups":["a","b","c","d","e","f"]}`, failure{484, "Too many groups specified (max 5 allowed)"}},
		{`{"request":"create","admin_key":1}`, failure{484, "Invalid element type (admin_key should be a string)"}},
		{`{"request":"create","default_prebuffering":1.0}`, failure{484, "Invalid element type (default_prebuffering should be a positive integer)"}},
		// edit, destroy, allowed.
		{`{"request":"edit","room":1,"new_is_private":1}`, failure{484, "Invalid element type (new_is_private should be a boolean)"}},
		{`{"request":"edit","new_pin":""}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"destroy","permanent":"no","room":1}`, failure{484, "Invalid element type (permanent should be a boolean)"}},
		{`{"request":"allowed","room":1}`, failure{483, "Missing mandatory element (action)"}},
		{`{"request":"allowed","room":1,"action":"ban"}`, failure{484, "Unsupported action 'ban' (allowed)"}},
		{`{"request":"allowed","room":1,"action":"Ban"}`, failure{484, "Unsupported action 'Ban' (allowed)"}},
		{`{"request":"allowed","room":1,"action":"add","allowed":{}}`, failure{484, "Invalid element type (allowed should be an array)"}},
		// rtp_forward and friends.
		{`{"request":"rtp_forward","room":1,"host":"127.0.0.1"}`, failure{483, "Missing mandatory element (port)"}},
		{`{"request":"rtp_forward","room":1,"port":5000}`, failure{483, "Missing mandatory element (host)"}},
		{`{"request":"rtp_forward","port":5000,"host":"h"}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"rtp_forward","room":1,"port":0,"host":"h"}`, failure{484, "Invalid port number (0)"}},
		{`{"request":"rtp_forward","room":1,"port":70000,"host":"h"}`, failure{484, "Invalid port number (70000)"}},
		{`{"request":"rtp_forward","room":1,"port":5000,"host":"h","codec":"g722"}`, failure{484, "Unsupported codec (g722)"}},
		{`{"request":"rtp_forward","room":1,"port":5000,"host":"h","host_family":"ipx"}`, failure{484, "Unsupported protocol family (ipx)"}},
		{`{"request":"rtp_forward","room":1,"port":5000,"host":"h","srtp_suite":64,"srtp_crypto":"k"}`, failure{484, "Invalid SRTP suite (64)"}},
		{`{"request":"rtp_forward","room":1,"port":5000,"host":"h","ssrc":-1}`, failure{484, "Invalid element type (ssrc should be a positive integer)"}},
		{`{"request":"stop_rtp_forward","room":1}`, failure{483, "Missing mandatory element (stream_id)"}},
		{`{"request":"play_file","room":1}`, failure{483, "Missing mandatory element (filename)"}},
		{`{"request":"play_file","room":1,"filename":"a.opus","loop":"yes"}`, failure{484, "Invalid element type (loop should be a boolean)"}},
		{`{"request":"is_playing","room":1}`, failure{483, "Missing mandatory element (file_id)"}},
		{`{"request":"stop_file","room":1,"file_id":1}`, failure{484, "Invalid element type (file_id should be a string)"}},
		{`{"request":"enable_recording","room":1}`, failure{483, "Missing mandatory element (record)"}},
		{`{"request":"enable_recording","record":true}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"enable_mjrs","room":1,"mjrs":true,"mjrs_dir":7}`, failure{484, "Invalid element type (mjrs_dir should be a string)"}},
		// join, changeroom, configure.
		{`{"request":"join"}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"join","room":1,"display":42}`, failure{484, "Invalid element type (display should be a string)"}},
		{`{"request":"join","room":"x","muted":"no"}`, failure{484, "Invalid element type (muted should be a boolean)"}},
		{`{"request":"join","room":1,"id":-5}`, failure{484, "Invalid element type (id should be a positive integer)"}},
		{`{"request":"join","room":1,"volume":-1}`, failure{484, "Invalid element type (volume should be a positive integer)"}},
		{`{"request":"join","room":1,"rtp":"127.0.0.1:5000"}`, failure{484, "Invalid element type (rtp should be an object)"}},
		{`{"request":"join","room":1,"rtp":{"ip":"127.0.0.1","port":"5000"}}`, failure{484, "Invalid element type (port should be a positive integer)"}},
		{`{"request":"join","room":1,"rtp":{"fec":1}}`, failure{484, "Invalid element type (fec should be a boolean)"}},
		{`{"request":"join","room":1,"pin":1234}`, failure{484, "Invalid element type (pin should be a string)"}},
		{`{"request":"changeroom"}`, failure{483, "Missing mandatory element (room)"}},
		{`{"request":"changeroom","room":2,"quality":"best"}`, failure{484, "Invalid element type (quality should be a positive integer)"}},
		{`{"request":"configure","muted":"false"}`, failure{484, "Invalid element type (muted should be a boolean)"}},
		{`{"request":"configure","spatial_position":-10}`, failure{484, "Invalid element type (spatial_position should be a positive integer)"}},
		{`{"request":"configure","update":"please"}`, failure{484, "Invalid element type (update should be a boolean)"}},
	}
	for _, c := range cases {
		req, err := Parse(json.RawMessage(c.body))
		if err == nil {
			t.Errorf("%s: accepted as %#v, want %d %q", c.body, req, c.want.code, c.want.reason)
			continue
		}
		if got := (failure{err.Code, err.Reason}); got != c.want {
			t.Errorf("%s:\n got %d %q\nwant %d %q", c.body, got.code, got.reason, c.want.code, c.want.reason)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestParseValid: well-formed requests come out with every element where it belongs, names in any
// case (Janus compares them with strcasecmp).
func TestParseValid(t *testing.T) {
	cases := []struct {
		body string
		want Request
	}{
		{`{"request":"exists","room":1234}`, &Exists{Room: 1234}},
		{"{ \"request\" : \"Exists\" ,\n \"room\" :\t12 }", &Exists{Room: 12}},
		{`{"request":"LIST"}`, &List{}},
		{`{"request":"list","admin_key":""}`, &List{}},
		{`{"request":"list","admin_key":7}`, &List{}},
		{`{"request":"list","admin_key":"k"}`, &List{AdminKey: ptr("k")}},
		{`{"request":"listparticipants","room":0}`, &ListParticipants{Room: 0}},
		{`{"request":"destroy","room":5,"secret":"s","permanent":true}`, &Destroy{Room: 5, Secret: ptr("s"), Permanent: true}},
		{`{"request":"edit","room":5,"new_pin":"","new_is_private":true}`, &Edit{Room: 5, NewPIN: ptr(""), NewIsPrivate: ptr(true)}},
		{`{"request":"allowed","room":5,"action":"enable"}`, &Allowed{Room: 5, Action: "enable"}},
		{`{"request":"allowed","room":5,"action":"ENABLE","allowed":[1]}`, &Allowed{Room: 5, Action: "enable"}},
		{`{"request":"allowed","room":5,"action":"add"}`, &Allowed{Room: 5, Action: "add"}},
		{`{"request":"allowed","room":5,"action":"remove","allowed":["a"],"secret":"s"}`, &Allowed{Room: 5, Secret: ptr("s"), Action: "remove", Tokens: []string{"a"}}},
		{`{"request":"kick","room":5,"id":9,"secret":"s"}`, &ParticipantAdmin{Op: "kick", Room: 5, ID: 9, Secret: ptr("s")}},
		{`{"request":"Mute","room":5,"id":9}`, &ParticipantAdmin{Op: "mute", Room: 5, ID: 9}},
		{`{"request":"unmute_room","room":5}`, &RoomAdmin{Op: "unmute_room", Room: 5}},
		{`{"request":"kick_all","room":5,"secret":"s"}`, &RoomAdmin{Op: "kick_all", Room: 5, Secret: ptr("s")}},
		{`{"request":"listforwarders","room":5}`, &RoomAdmin{Op: "listforwarders", Room: 5}},
		{`{"request":"resetdecoder","room":"ignored"}`, &ResetDecoder{}},
		{`{"request":"rtp_forward","room":5,"host":"10.0.0.1","port":5002}`,
			&RTPForward{Room: 5, Codec: "opus", Host: "10.0.0.1", Port: 5002}},
		{`{"request":"rtp_forward","room":5,"host":"h","port":5002,"codec":"pcmu","ptype":0,"ssrc":4294967297,"always_on":true,"group":"g","host_family":"ipv6"}`,
			&RTPForward{Room: 5, Codec: "pcmu", PType: ptr(0), SSRC: ptr(uint32(1)), Host: "h", Port: 5002, AlwaysOn: true, Group: ptr("g"), HostFamily: "ipv6"}},
		{`{"request":"rtp_forward","room":5,"host":"h","port":5002,"srtp_suite":80,"srtp_crypto":"a2V5"}`,
			&RTPForward{Room: 5, Codec: "opus", Host: "h", Port: 5002, SRTPSuite: 80, SRTPCrypto: "a2V5"}},
		{`{"request":"rtp_forward","room":5,"host":"h","port":5002,"srtp_suite":64}`,
			&RTPForward{Room: 5, Codec: "opus", Host: "h", Port: 5002}},
		{`{"request":"stop_rtp_forward","room":5,"stream_id":77}`, &StopRTPForward{Room: 5, StreamID: 77}},
		{`{"request":"play_file","room":5,"filename":"/a.opus","loop":true}`, &PlayFile{Room: 5, Filename: "/a.opus", Loop: true}},
		{`{"request":"is_playing","room":5,"file_id":"f"}`, &FileCheck{Op: "is_playing", Room: 5, FileID: "f"}},
		{`{"request":"stop_file","room":5,"file_id":"f","secret":"s"}`, &FileCheck{Op: "stop_file", Room: 5, FileID: "f", Secret: ptr("s")}},
		{`{"request":"enable_recording","room":5,"record":false}`, &EnableRecording{Room: 5}},
		{`{"request":"enable_mjrs","room":5,"mjrs":true,"mjrs_dir":"/tmp"}`, &EnableMJRs{Room: 5, MJRs: true, MJRsDir: ptr("/tmp")}},
		{`{"request":"leave"}`, &Leave{}},
		{`{"request":"hangup"}`, &Hangup{}},
		{`{"request":"join","room":1234,"display":"ab0"}`, &Join{Room: 1234, Display: ptr("ab0")}},
		{`{"request":"join","room":1234,"id":7,"muted":true,"codec":"pcma","quality":10,"volume":150,"spatial_position":20,"rtp":{"ip":"10.0.0.2","port":6000,"payload_type":111,"audiolevel_ext":1,"fec":true}}`,
			&Join{Room: 1234, ID: 7, Codec: ptr("pcma"), Settings: Settings{Muted: ptr(true), Quality: ptr(10), Volume: ptr(150), SpatialPosition: ptr(20)},
				RTP: &RTPEndpoint{IP: "10.0.0.2", Port: 6000, PayloadType: ptr(111), AudioLevelExt: ptr(1), FEC: true}}},
		{`{"request":"changeroom","room":2,"display":"x"}`, &ChangeRoom{Join{Room: 2, Display: ptr("x")}}},
		{`{"request":"configure","muted":false}`, &Configure{Settings: Settings{Muted: ptr(false)}}},
		{`{"request":"configure","display":"n","record":true,"filename":"f","group":"g","bitrate":32000,"update":true}`,
			&Configure{Display: ptr("n"), Record: ptr(true), Filename: ptr("f"), Group: ptr("g"), Update: true, Settings: Settings{Bitrate: ptr(32000)}}},
	}
	for _, c := range cases {
		got, err := Parse(json.RawMessage(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.body, got, c.want)
		}
		if Asynchronous(got.Name()) != isAsync(got) {
			t.Errorf("%s: Asynchronous(%q) disagrees with the request's type", c.body, got.Name())
		}
	}
}

func isAsync(r Request) bool {
	switch r.(type) {
	case *Join, *ChangeRoom, *Configure, *Leave, *Hangup:
		return true
	}
	return false
}

// TestEveryRequestOfJanus112 names Janus 1.1.2's requests (its handle_message and
// process_synchronous_request): each parses, and nothing else does.
func TestEveryRequestOfJanus112(t *testing.T) {
	names := []string{"create", "edit", "destroy", "exists", "allowed", "kick", "kick_all", "list",
		"listparticipants", "mute", "unmute", "mute_room", "unmute_room", "resetdecoder", "rtp_forward",
		"stop_rtp_forward", "listforwarders", "play_file", "is_playing", "stop_file", "enable_recording",
		"enable_mjrs", "join", "configure", "changeroom", "leave", "hangup"}
	if len(parsers) != len(names) {
		t.Errorf("%d parsers for Janus 1.1.2's %d requests", len(parsers), len(names))
	}
	for _, n := range names {
		if _, ok := parsers[n]; !ok {
			t.Errorf("request %q has no parser", n)
		}
	}
}

// TestAllowedTokensCheckedLast: a bad token list of add or remove is Janus's 484, reported by Check
// (after the room and secret); enable and disable ignore the list, as Janus does.
func TestAllowedTokensCheckedLast(t *testing.T) {
	r, err := Parse(json.RawMessage(`{"request":"allowed","room":1,"action":"add","allowed":["a",3]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.(*Allowed).Check(); err == nil || err.Code != ErrInvalid || err.Reason != "Invalid element in the allowed array (not a string)" {
		t.Errorf("Check: %v", err)
	}
	r, _ = Parse(json.RawMessage(`{"request":"allowed","room":1,"action":"remove","allowed":["a"]}`))
	if err := r.(*Allowed).Check(); err != nil || !reflect.DeepEqual(r.(*Allowed).Tokens, []string{"a"}) {
		t.Errorf("remove: %v %+v", err, r)
	}
}
