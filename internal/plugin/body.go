package plugin

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// This file is Janus's request validation (JANUS_VALIDATE_JSON_OBJECT and JANUS_CHECK_SECRET in
// janus's utils.h) for any plugin: a plugin declares each request's parameters in Janus's order, and
// the first one that is missing or of the wrong JSON type is reported with the plugin's own error code
// and Janus's exact wording.

// Codes are one plugin's error codes for the failures every request can have.
type Codes struct {
	NoMessage    int // the body is absent or null: "No message??"
	InvalidJSON  int // the body is not a JSON object
	Missing      int // a mandatory element is absent
	Invalid      int // an element has the wrong JSON type
	Unauthorized int // a secret, pin or key does not match
}

// RequestError is a plugin-level error, reported inside plugindata as
// {"<plugin>":"event","error_code":Code,"error":Reason}.
type RequestError struct {
	Code   int
	Reason string
}

func (e *RequestError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Reason) }

// Data is the plugindata of the error for the plugin whose short name is short ("audiobridge").
func (e *RequestError) Data(short string) map[string]any { return Error(short, e.Code, e.Reason) }

// Errorf builds a RequestError.
func Errorf(code int, format string, args ...any) *RequestError {
	return &RequestError{code, fmt.Sprintf(format, args...)}
}

// Kind is a parameter's JSON type, with Janus's flags folded in.
type Kind uint8

const (
	String   Kind = iota + 1
	Bool          // true or false
	Integer       // a JSON integer (no fraction or exponent), within int64
	Positive      // an Integer >= 0 (Janus's JANUS_JSON_PARAM_POSITIVE: zero counts)
	Array
	Object
	NonEmptyString // Janus's JANUS_JSON_PARAM_NONEMPTY on a string
)

// name is how Janus's janus_get_json_type_name spells the kind in "should be ...".
func (k Kind) name() string {
	switch k {
	case String:
		return "a string"
	case Bool:
		return "a boolean"
	case Integer:
		return "an integer"
	case Positive:
		return "a positive integer"
	case Array:
		return "an array"
	case Object:
		return "an object"
	case NonEmptyString:
		return "a non-empty string"
	}
	return "a value"
}

// Param is one entry of a Janus parameter table.
type Param struct {
	Name     string
	Kind     Kind
	Required bool
}

// Body is a request's JSON object. After Validate has accepted a table, the getters for the
// table's names cannot fail, so they return values only.
type Body struct {
	fields map[string]json.RawMessage
	codes  *Codes
}

// DecodeRequest is how every Janus plugin starts on a message: ParseBody, then the mandatory
// "request" string. The name comes back in lower case, as Janus compares names with strcasecmp;
// Body.Str("request") keeps it as sent, for "Unknown request '<name>'".
func DecodeRequest(raw json.RawMessage, codes *Codes) (string, Body, *RequestError) {
	b, err := ParseBody(raw, codes)
	if err != nil {
		return "", b, err
	}
	if err := b.Validate(Param{Name: "request", Kind: String, Required: true}); err != nil {
		return "", b, err
	}
	return strings.ToLower(b.Str("request")), b, nil
}

// ParseBody splits a message body into its elements: no body (or null) is codes.NoMessage, anything
// but an object codes.InvalidJSON, with Janus's reasons.
func ParseBody(raw json.RawMessage, codes *Codes) (Body, *RequestError) {
	trimmed := bytes.Trim(raw, " \t\r\n") // JSON's whitespace only (not \v, which TrimSpace takes)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return Body{}, Errorf(codes.NoMessage, "No message??")
	}
	b := Body{codes: codes}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &b.fields) != nil {
		return Body{}, Errorf(codes.InvalidJSON, "JSON error: not an object")
	}
	return b, nil
}

// Has reports whether the element is present (even if null).
func (b Body) Has(key string) bool {
	_, ok := b.fields[key]
	return ok
}

// Validate checks the parameters in order and reports the first failure as Janus does:
// "Missing mandatory element (room)" or "Invalid element type (room should be a positive integer)".
// A null value is of no kind, as in Janus (jansson's json_object_get returns the null).
func (b Body) Validate(params ...Param) *RequestError {
	for _, p := range params {
		v, ok := b.fields[p.Name]
		if !ok {
			if p.Required {
				return Errorf(b.codes.Missing, "Missing mandatory element (%s)", p.Name)
			}
			continue
		}
		if !p.Kind.accepts(v) {
			return Errorf(b.codes.Invalid, "Invalid element type (%s should be %s)", p.Name, p.Kind.name())
		}
	}
	return nil
}

func (k Kind) accepts(v json.RawMessage) bool {
	switch k {
	case String, NonEmptyString:
		var s string
		if v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return false
		}
		return k == String || s != ""
	case Bool:
		s := string(v)
		return s == "true" || s == "false"
	case Integer, Positive:
		n, ok := integer(v)
		return ok && (k == Integer || n >= 0)
	case Array:
		return v[0] == '['
	case Object:
		return v[0] == '{'
	}
	return false
}

// integer reads a JSON integer as jansson does: a number without fraction or exponent that fits
// in an int64 (jansson refuses bigger ones outright).
func integer(v json.RawMessage) (int64, bool) {
	if bytes.ContainsAny(v, ".eE") || len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// Str is a validated string element; "" when absent.
func (b Body) Str(key string) string {
	var s string
	_ = json.Unmarshal(b.fields[key], &s)
	return s
}

// OptStr is a validated string element, nil when absent.
func (b Body) OptStr(key string) *string {
	if !b.Has(key) {
		return nil
	}
	s := b.Str(key)
	return &s
}

// Bool is a validated boolean element; false when absent.
func (b Body) Bool(key string) bool { return string(b.fields[key]) == "true" }

// OptBool is a validated boolean element, nil when absent.
func (b Body) OptBool(key string) *bool {
	if !b.Has(key) {
		return nil
	}
	x := b.Bool(key)
	return &x
}

// Int is a validated integer element; 0 when absent.
func (b Body) Int(key string) int64 {
	n, _ := integer(b.fields[key])
	return n
}

// OptInt is a validated integer element, nil when absent.
func (b Body) OptInt(key string) *int64 {
	if !b.Has(key) {
		return nil
	}
	n := b.Int(key)
	return &n
}

// Uint is a validated Positive element; 0 when absent.
func (b Body) Uint(key string) uint64 { return uint64(max(b.Int(key), 0)) }

// Object is a validated object element, as a Body with the same codes; empty when absent.
func (b Body) Object(key string) Body {
	o := Body{codes: b.codes}
	_ = json.Unmarshal(b.fields[key], &o.fields)
	return o
}

// Items reads an array element's items as Bodies with the same codes; an item that is not an object
// is an empty Body, as jansson's json_object_get finds nothing in it (so a table on it reports its
// first mandatory element missing). Nil when the element is absent or not an array.
func (b Body) Items(key string) []Body {
	var items []json.RawMessage
	if json.Unmarshal(b.fields[key], &items) != nil {
		return nil
	}
	out := make([]Body, len(items))
	for i, it := range items {
		out[i] = Body{codes: b.codes}
		if len(it) > 0 && it[0] == '{' {
			_ = json.Unmarshal(it, &out[i].fields)
		}
	}
	return out
}

// Strings reads an array whose items must all be strings; reason is the plugin's message when one
// is not (Janus words it per array: "Invalid element in the allowed array (not a string)").
func (b Body) Strings(key, reason string) ([]string, *RequestError) {
	v, ok := b.fields[key]
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return nil, Errorf(b.codes.Invalid, "Invalid element type (%s should be an array)", key)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		if len(it) == 0 || it[0] != '"' || json.Unmarshal(it, &s) != nil {
			return nil, Errorf(b.codes.Invalid, "%s", reason)
		}
		out = append(out, s)
	}
	return out, nil
}

// CheckSecret is Janus's JANUS_CHECK_SECRET on what a request carried in the element key (nil:
// absent): when want is set, key must be present (Missing) and equal to want (Unauthorized,
// "Unauthorized (wrong <key>)"), compared in constant time as Janus does. That the value is a string
// is the parameter table's business (Invalid).
func (c *Codes) CheckSecret(key string, got *string, want string) *RequestError {
	if want == "" {
		return nil
	}
	if got == nil {
		return Errorf(c.Missing, "Missing mandatory element (%s)", key)
	}
	if subtle.ConstantTimeCompare([]byte(*got), []byte(want)) != 1 {
		return Errorf(c.Unauthorized, "Unauthorized (wrong %s)", key)
	}
	return nil
}
