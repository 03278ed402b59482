// Package janus holds the wire format of the Janus JSON API as strata speaks it: the core error codes
// with Janus's numbers and names, the decoder that turns one raw request into a Request (or into the
// Janus error a real Janus would answer with), and the outgoing Message envelope. It knows nothing of
// sessions or transports.
package janus

import "fmt"

// Code is a Janus core error code (src/apierror.h in Janus).
type Code int

// The Janus core error codes. Plugin errors are not among them: plugins report theirs inside
// plugindata.
const (
	ErrUnauthorized            Code = 403
	ErrUnauthorizedPlugin      Code = 405
	ErrTransportSpecific       Code = 450
	ErrMissingRequest          Code = 452
	ErrUnknownRequest          Code = 453
	ErrInvalidJSON             Code = 454
	ErrInvalidJSONObject       Code = 455
	ErrMissingMandatoryElement Code = 456
	ErrInvalidRequestPath      Code = 457
	ErrSessionNotFound         Code = 458
	ErrHandleNotFound          Code = 459
	ErrPluginNotFound          Code = 460
	ErrPluginAttach            Code = 461
	ErrPluginMessage           Code = 462
	ErrPluginDetach            Code = 463
	ErrJSEPUnknownType         Code = 464
	ErrJSEPInvalidSDP          Code = 465
	ErrTrickleInvalidStream    Code = 466
	ErrInvalidElementType      Code = 467
	ErrSessionConflict         Code = 468
	ErrUnexpectedAnswer        Code = 469
	ErrTokenNotFound           Code = 470
	ErrWebRTCState             Code = 471
	ErrNotAcceptingSessions    Code = 472
	ErrUnknown                 Code = 490
)

// codeNames are Janus's own names for the codes (JANUS_ERROR_<name>), typo included.
var codeNames = map[Code]string{
	ErrUnauthorized:            "UNAUTHORIZED",
	ErrUnauthorizedPlugin:      "UNAUTHORIZED_PLUGIN",
	ErrTransportSpecific:       "TRANSPORT_SPECIFIC",
	ErrMissingRequest:          "MISSING_REQUEST",
	ErrUnknownRequest:          "UNKNOWN_REQUEST",
	ErrInvalidJSON:             "INVALID_JSON",
	ErrInvalidJSONObject:       "INVALID_JSON_OBJECT",
	ErrMissingMandatoryElement: "MISSING_MANDATORY_ELEMENT",
	ErrInvalidRequestPath:      "INVALID_REQUEST_PATH",
	ErrSessionNotFound:         "SESSION_NOT_FOUND",
	ErrHandleNotFound:          "HANDLE_NOT_FOUND",
	ErrPluginNotFound:          "PLUGIN_NOT_FOUND",
	ErrPluginAttach:            "PLUGIN_ATTACH",
	ErrPluginMessage:           "PLUGIN_MESSAGE",
	ErrPluginDetach:            "PLUGIN_DETACH",
	ErrJSEPUnknownType:         "JSEP_UNKNOWN_TYPE",
	ErrJSEPInvalidSDP:          "JSEP_INVALID_SDP",
	ErrTrickleInvalidStream:    "TRICKE_INVALID_STREAM",
	ErrInvalidElementType:      "INVALID_ELEMENT_TYPE",
	ErrSessionConflict:         "SESSION_CONFLICT",
	ErrUnexpectedAnswer:        "UNEXPECTED_ANSWER",
	ErrTokenNotFound:           "TOKEN_NOT_FOUND",
	ErrWebRTCState:             "WEBRTC_STATE",
	ErrNotAcceptingSessions:    "NOT_ACCEPTING_SESSIONS",
	ErrUnknown:                 "UNKNOWN",
}

// Codes lists every core error code in ascending order.
func Codes() []Code {
	return []Code{403, 405, 450, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464,
		465, 466, 467, 468, 469, 470, 471, 472, 490}
}

// String returns Janus's name for the code, or "UNKNOWN(<n>)" for a number Janus does not define.
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("UNKNOWN(%d)", int(c))
}

// Error is a Janus core error: the "error" member of a {"janus":"error"} reply.
type Error struct {
	Code   Code   `json:"code"`
	Reason string `json:"reason"`
}

// Errorf builds an Error with a formatted reason.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	return fmt.Sprintf("janus error %d (%s): %s", int(e.Code), e.Code, e.Reason)
}

// Common reasons, worded as Janus words them so that logs and clients read the same.

// Missing reports a mandatory member that is absent (456).
func Missing(member string) *Error {
	return Errorf(ErrMissingMandatoryElement, "Missing mandatory element (%s)", member)
}

// WrongType reports a member of the wrong JSON type (467); want is e.g. "a string".
func WrongType(member, want string) *Error {
	return Errorf(ErrInvalidElementType, "Invalid element type (%s should be %s)", member, want)
}

// WrongPath reports a verb sent at a level (root, session, handle) where it does not apply (457).
func WrongPath(verb string) *Error {
	return Errorf(ErrInvalidRequestPath, "Unhandled request '%s' at this path", verb)
}

// UnknownVerb reports a verb the API does not have (453), as Janus words it.
func UnknownVerb(verb string) *Error {
	return Errorf(ErrUnknownRequest, "Unknown request '%s'", verb)
}

// NoSessionForHandle reports a handle id sent without a session id: Janus looks the handle up in
// session 0, which never exists, and answers 458 with its default reason.
func NoSessionForHandle() *Error {
	return Errorf(ErrSessionNotFound, "Session not found")
}
