// Package streaming is janus.plugin.streaming, Janus 1.x's multistream streaming plugin: mountpoints
// that take media from outside (plain RTP on UDP ports, live and ondemand files, RTSP) and viewers
// that watch them over WebRTC. The requests are Janus 1.1's, parsed and validated with Janus's
// error codes and wording; the media is the media core's: each source feeds sfu.Receivers, each
// viewer has a DownTrack per stream and, unlike Janus, its own allocator over its own bandwidth
// estimate, so viewers of a simulcast or SVC mountpoint each get what their path carries.
// docs/STREAMING.md is the reference.
package streaming

import "github.com/strata-rtc/strata/internal/plugin"

// Package is the plugin's Janus package name; Short the tag of its plugindata ("streaming":...).
const (
	Package = "janus.plugin.streaming"
	Short   = "streaming"
)

// Janus's streaming error codes (JANUS_STREAMING_ERROR_* in janus_streaming.c, 1.1.2).
const (
	ErrNoMessage     = 450 // no body: "No message??"
	ErrInvalidJSON   = 451 // the body is not an object
	ErrInvalidReq    = 452 // unknown request; recording on a non-RTP mountpoint; nothing to record
	ErrMissing       = 453 // a mandatory element is absent
	ErrInvalid       = 454 // wrong type or value of an element; unknown mountpoint type
	ErrNoSuchMP      = 455 // no such mountpoint; start, pause, configure, switch before watch
	ErrCantCreate    = 456 // create refused: id in use, no media, bad media type, bad SRTP suite
	ErrUnauthorized  = 457 // wrong secret, pin or admin_key
	ErrCantSwitch    = 458 // switch from or to a mountpoint that is not live RTP
	ErrCantRecord    = 459 // a recorder could not be started
	ErrInvalidState  = 460 // watch while already watching or renegotiating
	ErrUnknown       = 470 // anything else (permanent without a configuration file, ...)
	errLowest        = ErrNoMessage
	errHighest       = ErrUnknown
	noSuchMountpoint = "No such mountpoint/stream %d"
)

// Error is a request's failure as the streaming plugin reports it:
// {"streaming":"event","error_code":N,"error":"..."}.
type Error = plugin.RequestError

// codes are the streaming plugin's codes for the checks shared by every plugin.
var codes = plugin.Codes{
	NoMessage:    ErrNoMessage,
	InvalidJSON:  ErrInvalidJSON,
	Missing:      ErrMissing,
	Invalid:      ErrInvalid,
	Unauthorized: ErrUnauthorized,
}

func errorf(code int, format string, args ...any) *Error { return plugin.Errorf(code, format, args...) }

// NoSuchMountpoint is the 455 Janus gives when a request's id names no mountpoint (edit words it
// differently: see Edit).
func NoSuchMountpoint(id uint64) *Error { return errorf(ErrNoSuchMP, noSuchMountpoint, id) }
