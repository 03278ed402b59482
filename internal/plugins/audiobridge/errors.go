// Package audiobridge is the API layer of janus.plugin.audiobridge, Janus 1.x's audio mixer: the
// requests as Janus 1.1 takes them (parsed and validated with Janus's error codes and wording), the
// room options with Janus's defaults, and the replies' and events' names. It has no media: the
// mixer builds on it. docs/AUDIOBRIDGE.md is the reference.
package audiobridge

import "github.com/strata-rtc/strata/internal/plugin"

// Package is the plugin's Janus package name; Short the tag of its plugindata ("audiobridge":...).
const (
	Package = "janus.plugin.audiobridge"
	Short   = "audiobridge"
)

// Janus's audiobridge error codes (JANUS_AUDIOBRIDGE_ERROR_* in janus_audiobridge.c).
const (
	ErrNoMessage     = 480 // no body: "No message??"
	ErrInvalidJSON   = 481 // the body is not an object
	ErrInvalidReq    = 482 // unknown request; play_file where files are unsupported
	ErrMissing       = 483 // a mandatory element is absent
	ErrInvalid       = 484 // wrong type or value of an element
	ErrNoSuchRoom    = 485
	ErrRoomExists    = 486 // create with a room id in use
	ErrNotJoined     = 487 // configure, leave, changeroom, resetdecoder, SDP before join
	ErrLibopus       = 488 // an Opus encoder or decoder could not be created
	ErrUnauthorized  = 489 // wrong secret, pin, admin_key, token; plain RTP not allowed
	ErrIDExists      = 490 // join with a participant id in use; play_file with a file_id in use
	ErrAlreadyJoined = 491 // join when in a room; changeroom to the same room
	ErrNoSuchUser    = 492 // kick, mute, unmute of an unknown participant
	ErrInvalidSDP    = 493 // unparseable SDP, or an offer/answer in the wrong direction
	ErrNoSuchGroup   = 494 // join, configure, rtp_forward, play_file naming an unknown group
	ErrUnknown       = 499 // anything else (unsupported sampling rate, I/O errors)
)

// Error is a request's failure as the audiobridge reports it:
// {"audiobridge":"event","error_code":N,"error":"..."}.
type Error = plugin.RequestError

// codes are the audiobridge's codes for the checks shared by every plugin.
var codes = plugin.Codes{
	NoMessage:    ErrNoMessage,
	InvalidJSON:  ErrInvalidJSON,
	Missing:      ErrMissing,
	Invalid:      ErrInvalid,
	Unauthorized: ErrUnauthorized,
}

func errorf(code int, format string, args ...any) *Error { return plugin.Errorf(code, format, args...) }

// CheckSecret applies a room's secret (or pin, or the plugin's admin_key) to what a request carried
// in the element key (nil: absent), with the audiobridge's codes: when want is set, 483 if absent and
// 489 if different. The parser has already refused a value that is not a string (484).
func CheckSecret(key string, got *string, want string) *Error {
	return codes.CheckSecret(key, got, want)
}
