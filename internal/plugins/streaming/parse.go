package streaming

import (
	"encoding/json"

	"github.com/strata-rtc/strata/internal/plugin"
)

// Request is one parsed streaming request: one of the types in requests.go, create.go and viewer.go.
type Request interface {
	// Name is the request's name in lower case ("watch").
	Name() string
}

// Asynchronous reports whether Janus answers the request with `ack` and its result in an event
// (watch, start, pause, configure, switch, stop) rather than synchronously. Janus decides this from
// the name alone, so even a malformed watch is acked and its error comes as an event.
func Asynchronous(name string) bool {
	switch name {
	case "watch", "start", "pause", "configure", "switch", "stop":
		return true
	}
	return false
}

// Decode reads a message body's request name: the body must be an object (450, 451) with a string
// "request" (453, 454). Janus compares names case-insensitively (strcasecmp), so the name is
// returned in lower case. The plugin needs the name before the rest of the request because some
// checks of state come first in Janus (configure before watch is 455 whatever else is wrong).
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
// returns the typed request. It checks what Janus checks before looking at any mountpoint; what
// Janus checks after finding it is each request's Check method (so that an unknown mountpoint is 455
// before a wrong secret is 457, as in Janus). An unknown name is 452 "Unknown request '<name>'",
// with the name as sent. `kick` (one viewer) is strata's: Janus 1.1.2 has only kick_all.
func ParseBody(name string, b plugin.Body) (Request, *Error) {
	parse, ok := parsers[name]
	if !ok {
		return nil, errorf(ErrInvalidReq, "Unknown request '%s'", b.Str("request"))
	}
	return parse(b)
}

// parsers are Janus 1.1's requests, by lower-case name.
var parsers = map[string]func(plugin.Body) (Request, *Error){
	"list":      parseList,
	"info":      parseInfo,
	"create":    parseCreate,
	"destroy":   parseDestroy,
	"edit":      parseEdit,
	"enable":    parseToggle("enable"),
	"disable":   parseToggle("disable"),
	"recording": parseRecording,
	"kick":      parseKick,
	"kick_all":  parseKickAll,
	"watch":     parseWatch,
	"configure": parseConfigure,
	"switch":    parseSwitch,
	"start":     func(plugin.Body) (Request, *Error) { return &Start{}, nil },
	"pause":     func(plugin.Body) (Request, *Error) { return &Pause{}, nil },
	"stop":      func(plugin.Body) (Request, *Error) { return &Stop{}, nil },
}

// idParam is Janus's id_parameters. Mountpoint ids are numbers: Janus's string_ids mode (ids as
// strings, idstr_parameters) is not offered.
var (
	idParam    = need(pos("id"))
	idOptParam = pos("id")
)

func str(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.String} }
func boo(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.Bool} }
func pos(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.Positive} }
func integer(n string) plugin.Param    { return plugin.Param{Name: n, Kind: plugin.Integer} }
func arr(n string) plugin.Param        { return plugin.Param{Name: n, Kind: plugin.Array} }
func need(p plugin.Param) plugin.Param { p.Required = true; return p }

// optInt narrows an optional validated integer to int (Janus reads them as int or uint32).
func optInt(b plugin.Body, key string) *int {
	v := b.OptInt(key)
	if v == nil {
		return nil
	}
	n := int(max(min(*v, 1<<31-1), -1<<31))
	return &n
}

// Secret is an element Janus checks with JANUS_CHECK_SECRET (secret, pin, admin_key) only once it
// knows the value to compare with: its type is not in any parameter table, so a number where the
// mountpoint has no secret is no error, and one where it has a secret is 454.
type Secret struct {
	Key     string // the element's name
	Present bool   // the element is in the body, of any type
	Value   string // its value when a string
	wrong   bool   // present but not a string
}

func readSecret(b plugin.Body, key string) Secret {
	s := Secret{Key: key, Present: b.Has(key)}
	if s.Present {
		s.wrong = b.Validate(str(key)) != nil
		s.Value = b.Str(key)
	}
	return s
}

// Check applies want (the mountpoint's secret or pin, or the plugin's admin_key; "" for none):
// when set, the element must be present (453), a string (454) and equal (457, compared in constant
// time).
func (s Secret) Check(want string) *Error {
	if want == "" {
		return nil
	}
	if s.wrong {
		return errorf(ErrInvalid, "Invalid element type (%s should be a string)", s.Key)
	}
	var got *string
	if s.Present {
		got = &s.Value
	}
	return codes.CheckSecret(s.Key, got, want)
}

// idOnly parses id_parameters.
func idOnly(b plugin.Body) (uint64, *Error) {
	if err := b.Validate(idParam); err != nil {
		return 0, err
	}
	return b.Uint("id"), nil
}
