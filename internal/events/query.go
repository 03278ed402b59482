package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// Error codes of a query's answer, as Janus's sample handler.
const (
	ErrInvalidRequest = 411
	ErrMissingElement = 412
	ErrInvalidElement = 413
)

// tweak is a validated "tweak" request; nil members were absent.
type tweak struct {
	mask           *Mask
	grouping       *bool
	maxRetr        *int64
	backoff        *time.Duration
	backend        *string
	user, password *string
}

type queryError struct {
	code   int
	reason string
}

func qerr(code int, format string, args ...any) *queryError {
	return &queryError{code: code, reason: fmt.Sprintf(format, args...)}
}

func (e *queryError) answer() map[string]any {
	return map[string]any{"error_code": e.code, "error": e.reason}
}

// query answers a query_eventhandler request for b: "tweak" changes settings (all checked before any
// is applied; setBackend checks and applies backend, backend_user and backend_pwd), "stats" gives the
// counters.
func query(req json.RawMessage, b *backend, stats func() Stats, setBackend func(tweak) *queryError) any {
	verb, fields, qe := parseQuery(req)
	if qe != nil {
		return qe.answer()
	}
	switch verb {
	case "stats":
		return map[string]any{"result": 200, "stats": stats()}
	case "tweak":
		t, qe := parseTweak(fields)
		if qe != nil {
			return qe.answer()
		}
		if qe := setBackend(t); qe != nil {
			return qe.answer()
		}
		if t.mask != nil {
			b.mask.Store(uint32(*t.mask))
		}
		if t.grouping != nil {
			b.grouping.Store(*t.grouping)
		}
		if t.maxRetr != nil {
			b.maxRetr.Store(*t.maxRetr)
		}
		if t.backoff != nil {
			b.backoff.Store(int64(*t.backoff))
		}
		return map[string]any{"result": 200}
	}
	return qerr(ErrInvalidRequest, "Unknown request '%s'", verb).answer()
}

// parseQuery reads the request's verb (its "request" member, lower-cased) and members.
func parseQuery(req json.RawMessage) (string, map[string]json.RawMessage, *queryError) {
	trimmed := bytes.TrimSpace(req)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return "", nil, qerr(ErrMissingElement, "Missing mandatory element (request)")
	}
	var fields map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &fields) != nil {
		return "", nil, qerr(ErrInvalidElement, "Invalid element type (request should be an object)")
	}
	raw, ok := fields["request"]
	if !ok {
		return "", nil, qerr(ErrMissingElement, "Missing mandatory element (request)")
	}
	var verb string
	if json.Unmarshal(raw, &verb) != nil {
		return "", nil, qerr(ErrInvalidElement, "Invalid element type (request should be a string)")
	}
	return strings.ToLower(verb), fields, nil
}

// parseTweak checks a tweak's members: events (a mask string), grouping (boolean), backend,
// backend_user, backend_pwd (strings), max_retransmissions (integer >= 0), retransmissions_backoff
// (integer ms > 0).
func parseTweak(fields map[string]json.RawMessage) (tweak, *queryError) {
	var t tweak
	str := func(name string) (*string, *queryError) {
		raw, ok := fields[name]
		if !ok {
			return nil, nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, qerr(ErrInvalidElement, "Invalid element type (%s should be a string)", name)
		}
		return &s, nil
	}
	integer := func(name string, min int64) (*int64, *queryError) {
		raw, ok := fields[name]
		if !ok {
			return nil, nil
		}
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || f < float64(min) || f > 1<<31-1 {
			return nil, qerr(ErrInvalidElement, "Invalid element type (%s should be an integer of at least %d)", name, min)
		}
		v := int64(f)
		return &v, nil
	}
	var qe *queryError
	events, qe := str("events")
	if qe != nil {
		return t, qe
	}
	if events != nil {
		m, err := ParseMask(*events)
		if err != nil {
			return t, qerr(ErrInvalidElement, "Invalid element (events: %v)", err)
		}
		t.mask = &m
	}
	if raw, ok := fields["grouping"]; ok {
		var g bool
		if json.Unmarshal(raw, &g) != nil {
			return t, qerr(ErrInvalidElement, "Invalid element type (grouping should be a boolean)")
		}
		t.grouping = &g
	}
	if t.backend, qe = str("backend"); qe != nil {
		return t, qe
	}
	if t.user, qe = str("backend_user"); qe != nil {
		return t, qe
	}
	if t.password, qe = str("backend_pwd"); qe != nil {
		return t, qe
	}
	if t.maxRetr, qe = integer("max_retransmissions", 0); qe != nil {
		return t, qe
	}
	ms, qe := integer("retransmissions_backoff", 1)
	if qe != nil {
		return t, qe
	}
	if ms != nil {
		d := time.Duration(*ms) * time.Millisecond
		t.backoff = &d
	}
	return t, nil
}

// checkURL checks that s is an absolute URL with one of the schemes and a host.
func checkURL(s string, schemes ...string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("event handler backend %q: %v", s, err)
	}
	for _, sc := range schemes {
		if strings.EqualFold(u.Scheme, sc) {
			if u.Host == "" {
				return fmt.Errorf("event handler backend %q: no host", s)
			}
			return nil
		}
	}
	return fmt.Errorf("event handler backend %q: the scheme must be %s", s, strings.Join(schemes, " or "))
}
