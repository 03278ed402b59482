package audiobridge

import (
	"encoding/json"

	"github.com/strata-rtc/strata/internal/plugin"
)

// Request is one parsed audiobridge request: one of the types in requests.go and participant.go.
type Request interface {
	// Name is the request's name in lower case ("join").
	Name() string
}

// Asynchronous reports whether Janus answers the request with `ack` and its result in an event
// (join, configure, changeroom, leave, hangup) rather than synchronously. Janus decides this from
// the name alone, so even a malformed join is acked and its error comes as an event.
func Asynchronous(name string) bool {
	switch name {
	case "join", "configure", "changeroom", "leave", "hangup":
		return true
	}
	return false
}

// Decode reads a message body's request name: the body must be an object (480, 481) with a string
// "request" (483, 484). Janus compares names case-insensitively (strcasecmp), so the name is
// returned in lower case. The plugin needs the name before the rest of the request because some
// checks of state come first in Janus (a join while joined is 491 whatever else is wrong).
func Decode(raw json.RawMessage) (string, plugin.Body, *Error) {
	return plugin.DecodeRequest(raw, &codes)
}

// Parse decodes and parses a message body: Decode, then ParseBody.
func Parse(raw json.RawMessage) (Request, *Error) {
	name, b, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return ParseBody(name, b)
}

// ParseBody checks a request's elements against Janus 1.1's parameter tables, in Janus's order, and
// returns the typed request. It checks types and what Janus checks before looking at any room; the
// checks of values that Janus makes after finding the room are each request's Check method (so that
// an unknown room is 485 before a bad quality is 484, as in Janus). An unknown name is 482
// "Unknown request '<name>'", as are the requests Janus 1.1 does not have (suspend, resume, ...).
func ParseBody(name string, b plugin.Body) (Request, *Error) {
	parse, ok := parsers[name]
	if !ok {
		return nil, errorf(ErrInvalidReq, "Unknown request '%s'", b.Str("request"))
	}
	return parse(b)
}

// parsers are Janus 1.1's requests, by lower-case name.
var parsers = map[string]func(plugin.Body) (Request, *Error){
	"create":           parseCreate,
	"edit":             parseEdit,
	"destroy":          parseDestroy,
	"exists":           roomOnly(func(r uint64) Request { return &Exists{Room: r} }),
	"listparticipants": roomOnly(func(r uint64) Request { return &ListParticipants{Room: r} }),
	"allowed":          parseAllowed,
	"kick":             parseParticipantAdmin("kick"),
	"mute":             parseParticipantAdmin("mute"),
	"unmute":           parseParticipantAdmin("unmute"),
	"kick_all":         parseRoomAdmin("kick_all"),
	"mute_room":        parseRoomAdmin("mute_room"),
	"unmute_room":      parseRoomAdmin("unmute_room"),
	"listforwarders":   parseRoomAdmin("listforwarders"),
	"list":             parseList,
	"resetdecoder":     func(plugin.Body) (Request, *Error) { return &ResetDecoder{}, nil },
	"rtp_forward":      parseRTPForward,
	"stop_rtp_forward": parseStopRTPForward,
	"play_file":        parsePlayFile,
	"is_playing":       parseFileCheck("is_playing"),
	"stop_file":        parseFileCheck("stop_file"),
	"enable_recording": parseEnableRecording,
	"enable_mjrs":      parseEnableMJRs,
	"join":             parseJoin,
	"changeroom":       parseChangeRoom,
	"configure":        parseConfigure,
	"leave":            func(plugin.Body) (Request, *Error) { return &Leave{}, nil },
	"hangup":           func(plugin.Body) (Request, *Error) { return &Hangup{}, nil },
}

// Parameter tables, named after Janus's.
var (
	roomParam    = plugin.Param{Name: "room", Kind: plugin.Positive, Required: true}
	roomOptParam = plugin.Param{Name: "room", Kind: plugin.Positive}
	idParam      = plugin.Param{Name: "id", Kind: plugin.Positive, Required: true}
	idOptParam   = plugin.Param{Name: "id", Kind: plugin.Positive}
	secretParam  = plugin.Param{Name: "secret", Kind: plugin.String}
	adminKey     = plugin.Param{Name: "admin_key", Kind: plugin.String}
)

func str(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.String} }
func boo(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.Bool} }
func pos(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.Positive} }
func arr(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.Array} }
func need(p plugin.Param) plugin.Param { p.Required = true; return p }

// optInt narrows an optional validated integer to int (Janus reads them as int or uint32).
func optInt(b plugin.Body, key string) *int {
	v := b.OptInt(key)
	if v == nil {
		return nil
	}
	n := int(min(*v, 1<<31-1))
	return &n
}

// roomOnly parses the requests that take nothing but a room.
func roomOnly(mk func(uint64) Request) func(plugin.Body) (Request, *Error) {
	return func(b plugin.Body) (Request, *Error) {
		if err := b.Validate(roomParam); err != nil {
			return nil, err
		}
		return mk(b.Uint("room")), nil
	}
}
