package videoroom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Janus's videoroom error codes (janus_videoroom.c).
const (
	ErrNoMessage        = 421
	ErrInvalidJSON      = 422
	ErrInvalidRequest   = 423
	ErrJoinFirst        = 424
	ErrAlreadyJoined    = 425
	ErrNoSuchRoom       = 426
	ErrRoomExists       = 427
	ErrNoSuchFeed       = 428
	ErrMissingElement   = 429
	ErrInvalidElement   = 430
	ErrInvalidSDPType   = 431
	ErrPublishersFull   = 432
	ErrUnauthorized     = 433
	ErrAlreadyPublished = 434
	ErrNotPublished     = 435
	ErrIDExists         = 436
	ErrInvalidSDP       = 437
	ErrUnknown          = 499
)

// requestError is a plugin-level error, reported inside plugindata.
type requestError struct {
	code   int
	reason string
}

func (e *requestError) Error() string { return fmt.Sprintf("%d: %s", e.code, e.reason) }

func errorf(code int, format string, args ...any) *requestError {
	return &requestError{code, fmt.Sprintf(format, args...)}
}

func (e *requestError) data() map[string]any {
	return map[string]any{short: "event", "error_code": e.code, "error": e.reason}
}

// body is a request's JSON object, with Janus-style typed getters: a missing mandatory element
// is 429, a wrongly typed one 430.
type body map[string]json.RawMessage

func parseBody(raw json.RawMessage) (body, *requestError) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, errorf(ErrNoMessage, "No message??")
	}
	var b body
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &b) != nil {
		return nil, errorf(ErrInvalidJSON, "JSON error: not an object")
	}
	return b, nil
}

func (b body) has(key string) bool {
	_, ok := b[key]
	return ok
}

func (b body) str(key string, mandatory bool) (string, bool, *requestError) {
	v, ok := b[key]
	if !ok {
		if mandatory {
			return "", false, errorf(ErrMissingElement, "Missing mandatory element (%s)", key)
		}
		return "", false, nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false, errorf(ErrInvalidElement, "Invalid element type (%s should be a string)", key)
	}
	return s, true, nil
}

func (b body) boolean(key string) (bool, bool, *requestError) {
	v, ok := b[key]
	if !ok {
		return false, false, nil
	}
	var x bool
	if json.Unmarshal(v, &x) != nil {
		return false, false, errorf(ErrInvalidElement, "Invalid element type (%s should be a boolean)", key)
	}
	return x, true, nil
}

// uint reads a non-negative integer.
func (b body) uint(key string, mandatory bool) (uint64, bool, *requestError) {
	v, ok := b[key]
	if !ok {
		if mandatory {
			return 0, false, errorf(ErrMissingElement, "Missing mandatory element (%s)", key)
		}
		return 0, false, nil
	}
	var x uint64
	if json.Unmarshal(v, &x) != nil {
		return 0, false, errorf(ErrInvalidElement, "Invalid element type (%s should be a positive integer)", key)
	}
	return x, true, nil
}

// list reads an array of objects.
func (b body) list(key string, mandatory bool) ([]body, bool, *requestError) {
	v, ok := b[key]
	if !ok {
		if mandatory {
			return nil, false, errorf(ErrMissingElement, "Missing mandatory element (%s)", key)
		}
		return nil, false, nil
	}
	var xs []body
	if json.Unmarshal(v, &xs) != nil {
		return nil, false, errorf(ErrInvalidElement, "Invalid element type (%s should be an array of objects)", key)
	}
	return xs, true, nil
}

func (b body) strings(key string) ([]string, bool, *requestError) {
	v, ok := b[key]
	if !ok {
		return nil, false, nil
	}
	var xs []string
	if json.Unmarshal(v, &xs) != nil {
		return nil, false, errorf(ErrInvalidElement, "Invalid element type (%s should be an array of strings)", key)
	}
	return xs, true, nil
}

// room reads the mandatory numeric room id.
func (b body) room() (uint64, *requestError) {
	id, _, err := b.uint("room", true)
	return id, err
}

// checkSecret applies Janus's JANUS_CHECK_SECRET: when want is set, key must be present (429) and
// equal (433).
func (b body) checkSecret(key, want string) *requestError {
	if want == "" {
		return nil
	}
	got, ok, err := b.str(key, true)
	if err != nil {
		return err
	}
	if !ok || got != want {
		return errorf(ErrUnauthorized, "Unauthorized (wrong %s)", key)
	}
	return nil
}

// codecList splits "vp8,vp9" into lower-case names.
func codecList(s string) []string {
	var out []string
	for c := range strings.SplitSeq(s, ",") {
		if c = strings.ToLower(strings.TrimSpace(c)); c != "" {
			out = append(out, c)
		}
	}
	return out
}
