package audiobridge

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// TestReferenceRoomIsJanusDefaults: the sample room of configs/strata.yaml states every option, and
// what it states equals Janus's defaults (DefaultRoomOptions) at Janus's sample rate; a room of the
// configuration that states nothing but its id resolves to the same, so the reference cannot drift
// from the defaults the plugin applies.
func TestReferenceRoomIsJanusDefaults(t *testing.T) {
	rooms := config.Default().Plugins.AudioBridge.Rooms
	if len(rooms) != 1 || rooms[0].ID != 1234 {
		t.Fatalf("reference rooms %+v: want Janus's demo room 1234", rooms)
	}
	got := OptionsFromConfig(rooms[0])
	want := DefaultRoomOptions()
	want.Description = "Demo Room"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reference room 1234:\n got %+v\nwant %+v", got, want)
	}
	bare := OptionsFromConfig(config.AudioBridgeRoom{ID: 1234, Description: "Demo Room"})
	if !reflect.DeepEqual(bare, want) {
		t.Errorf("a room stating nothing:\n got %+v\nwant %+v", bare, want)
	}
	if got := OptionsFromConfig(config.AudioBridgeRoom{ID: 9}).Description; got != "Room 9" {
		t.Errorf("description of a room without one: %q, want Janus's \"Room 9\"", got)
	}
}

func TestCreateOptions(t *testing.T) {
	parse := func(body string) *Create {
		t.Helper()
		r, err := Parse(json.RawMessage(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return r.(*Create)
	}
	c := parse(`{"request":"create"}`)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if want := DefaultRoomOptions(); !reflect.DeepEqual(c.Options, want) {
		t.Errorf("bare create:\n got %+v\nwant %+v", c.Options, want)
	}
	// Janus replaces out-of-range values by defaults without an error.
	c = parse(`{"request":"create","room":42,"sampling":48000,"audiolevel_ext":false,"audio_active_packets":0,
		"default_prebuffering":51,"default_expectedloss":21,"default_bitrate":499,"allowed":[],"is_private":true}`)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	o := c.Options
	if c.Room != 42 || o.SamplingRate != 48000 || o.AudioLevelExt || o.AudioActivePackets != 100 ||
		o.DefaultPrebuffering != 6 || o.DefaultExpectedLoss != 0 || o.DefaultBitrate != 0 || !o.CheckTokens || !o.IsPrivate {
		t.Errorf("create with fallbacks: %+v", o)
	}
	c = parse(`{"request":"create","default_prebuffering":0,"default_expectedloss":20,"default_bitrate":512000,"sampling_rate":8000}`)
	if err := c.Check(); err != nil || c.Options.DefaultPrebuffering != 0 || c.Options.DefaultExpectedLoss != 20 ||
		c.Options.DefaultBitrate != 512000 || c.Options.SamplingRate != 8000 {
		t.Errorf("create with edge values: %v %+v", err, c.Options)
	}
	for _, body := range []string{`{"request":"create","sampling_rate":44100}`, `{"request":"create","sampling_rate":0}`} {
		err := parse(body).Check()
		if err == nil || err.Code != ErrUnknown {
			t.Errorf("%s: %v, want 499 Unsupported sampling rate", body, err)
		}
	}
	if err := parse(`{"request":"create","sampling_rate":44100}`).Check(); err.Reason != "Unsupported sampling rate 44100" {
		t.Errorf("reason %q", err.Reason)
	}
}

func TestParticipantSettings(t *testing.T) {
	room := DefaultRoomOptions()
	room.DefaultBitrate, room.DefaultExpectedLoss = 24000, 5
	join := func(body string) (Participant, *Error) {
		t.Helper()
		r, err := Parse(json.RawMessage(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return r.(*Join).NewParticipant(&room)
	}
	p, err := join(`{"request":"join","room":1}`)
	want := Participant{Codec: "opus", Prebuffer: 6, Bitrate: 24000, Quality: 4, ExpectedLoss: 5, Volume: 100,
		SpatialPosition: 50, AudioLevelAverage: 25, AudioActivePackets: 100}
	if err != nil || p != want {
		t.Errorf("join with nothing:\n got %+v %v\nwant %+v", p, err, want)
	}
	p, err = join(`{"request":"join","room":1,"prebuffer":51,"bitrate":600000,"spatial_position":180,"codec":"pcmu",
		"audio_level_average":0,"audio_active_packets":20,"muted":true}`)
	want = Participant{Muted: true, Codec: "pcmu", Prebuffer: 6, Bitrate: 24000, Quality: 4, ExpectedLoss: 5, Volume: 100,
		SpatialPosition: 100, AudioLevelAverage: 25, AudioActivePackets: 20}
	if err != nil || p != want {
		t.Errorf("join with fallbacks:\n got %+v %v\nwant %+v", p, err, want)
	}
	r, _ := Parse(json.RawMessage(`{"request":"changeroom","room":2}`))
	if p, err := r.(*ChangeRoom).NewParticipant(&room); err != nil || p.SpatialPosition != 64 {
		t.Errorf("changeroom: spatial position %d (%v), want Janus 1.1's 64", p.SpatialPosition, err)
	}
	for body, reason := range map[string]string{
		`{"request":"join","room":1,"quality":0}`:        "Invalid element (quality should be a positive integer between 1 and 10)",
		`{"request":"join","room":1,"quality":11}`:       "Invalid element (quality should be a positive integer between 1 and 10)",
		`{"request":"join","room":1,"expected_loss":21}`: "Invalid element (expected_loss should be a positive integer between 0 and 20)",
		`{"request":"join","room":1,"codec":"g722"}`:     "Invalid element (codec must opus, pcmu or pcma)",
	} {
		if _, err := join(body); err == nil || err.Code != ErrInvalid || err.Reason != reason {
			t.Errorf("%s: %v, want 484 %q", body, err, reason)
		}
	}

	r, _ = Parse(json.RawMessage(`{"request":"configure","quality":12,"muted":true}`))
	before := want
	if err := r.(*Configure).Apply(&want, &room); err == nil || err.Code != ErrInvalid || want != before {
		t.Errorf("configure with a bad quality: %v, participant %+v (must be unchanged)", err, want)
	}
	r, _ = Parse(json.RawMessage(`{"request":"configure","muted":false,"volume":30,"bitrate":100}`))
	if err := r.(*Configure).Apply(&want, &room); err != nil || want.Muted || want.Volume != 30 || want.Bitrate != 24000 {
		t.Errorf("configure: %v %+v", err, want)
	}
}

func TestCheckSecret(t *testing.T) {
	cases := []struct {
		got  *string
		want string
		code int
	}{
		{nil, "", 0}, {ptr("x"), "", 0}, {ptr("s"), "s", 0},
		{nil, "s", ErrMissing}, {ptr(""), "s", ErrUnauthorized}, {ptr("S"), "s", ErrUnauthorized},
	}
	for _, c := range cases {
		err := CheckSecret("secret", c.got, c.want)
		if code := 0; err != nil {
			code = err.Code
			if code != c.code {
				t.Errorf("CheckSecret(%v, %q) = %v, want %d", c.got, c.want, err, c.code)
			}
		} else if c.code != 0 {
			t.Errorf("CheckSecret(%v, %q) passed, want %d", c.got, c.want, c.code)
		}
	}
	if err := CheckSecret("pin", nil, "1"); err.Reason != "Missing mandatory element (pin)" {
		t.Errorf("reason %q", err.Reason)
	}
	if err := CheckSecret("pin", ptr("2"), "1"); err.Reason != "Unauthorized (wrong pin)" {
		t.Errorf("reason %q", err.Reason)
	}
}
