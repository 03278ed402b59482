package janus

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// VerbSet is the set of verbs an API understands; Decode answers 453 for any other (see Decode).
type VerbSet map[string]bool

// APIVerbs are the verbs of the Janus API proper (HTTP and WebSocket transports).
var APIVerbs = VerbSet{
	"info": true, "ping": true, "create": true, "attach": true, "keepalive": true, "claim": true,
	"destroy": true, "detach": true, "hangup": true, "message": true, "trickle": true,
}

// AdminVerbs are the verbs of the admin API that strata implements.
var AdminVerbs = VerbSet{
	"add_token": true, "list_tokens": true, "remove_token": true, "allow_token": true, "disallow_token": true, "start_pcap": true, "stop_pcap": true,
	"info": true, "ping": true, "get_status": true, "list_sessions": true, "list_handles": true,
	"handle_info": true, "destroy_session": true, "detach_handle": true, "hangup_webrtc": true,
	"set_session_timeout": true, "set_log_level": true, "accept_new_sessions": true,
	"message_plugin": true, "query_eventhandler": true, "custom_event": true,
	"cluster": true, "drain": true,
}

// Request is one decoded request. Members that were absent are zero; members that were present have
// the JSON type Janus requires (Decode has checked). Verb-specific checks (a mandatory body, a JSEP's
// contents) are the gateway's.
type Request struct {
	// Janus is the verb, lower-cased (Janus compares verbs case-insensitively); Verb is as sent.
	Janus string
	Verb  string
	// Transaction is the client's transaction string, echoed in every reply.
	Transaction string
	// SessionID and HandleID come from the body (0 = absent); transports may override them from
	// the URL path.
	SessionID uint64
	HandleID  uint64

	APISecret   string
	Token       string
	AdminSecret string

	// Plugin and OpaqueID belong to attach; ID to create (a client-chosen session id).
	Plugin   string
	OpaqueID string
	ID       uint64

	// Body and JSEP belong to message; both are JSON objects when present.
	Body json.RawMessage
	JSEP json.RawMessage
	// Candidate (an object) and Candidates (an array of anything) belong to trickle.
	Candidate  json.RawMessage
	Candidates []json.RawMessage

	// Fields holds every top-level member, for verb-specific parameters (the admin API's timeout,
	// level, accept, request...).
	Fields map[string]json.RawMessage
}

// Decode parses one raw request. On failure it returns the Janus error a Janus server would answer
// with, and the Request holds whatever could be read before the failure (transaction, session_id) so
// that the error reply can echo them. It never panics, whatever the input.
//
// A verb outside verbs is the one failure that is not final: Janus answers it only once it knows
// where the request was addressed (457 at the root, 403/458/459 before 453 at a session or handle),
// so Decode returns ErrUnknownRequest with the ids, the transaction, the verb and the credentials
// read, and leaves the answer to the caller.
func Decode(data []byte, verbs VerbSet) (Request, *Error) {
	var req Request
	if !json.Valid(data) {
		return req, Errorf(ErrInvalidJSON, "JSON error: %s", syntaxError(data))
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return req, Errorf(ErrInvalidJSONObject, "JSON error: not an object")
	}
	if err := json.Unmarshal(data, &req.Fields); err != nil {
		return req, Errorf(ErrInvalidJSON, "JSON error: %v", err)
	}
	// The ids first: error replies echo the session_id when it was readable.
	if err := req.decodeIDs(); err != nil {
		return req, err
	}
	if err := req.decodeEnvelope(verbs); err != nil {
		if err.Code == ErrUnknownRequest {
			req.readCredentials()
		}
		return req, err
	}
	return req, req.decodeMembers()
}

func syntaxError(data []byte) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

func (r *Request) decodeIDs() *Error {
	var err *Error
	if r.SessionID, err = r.uintField("session_id"); err != nil {
		return err
	}
	r.HandleID, err = r.uintField("handle_id")
	return err
}

// decodeEnvelope reads transaction and janus, in Janus's order: a request without a transaction is
// refused before anything else is looked at.
func (r *Request) decodeEnvelope(verbs VerbSet) *Error {
	tx, present, err := r.stringField("transaction")
	if err != nil {
		return err
	}
	if !present {
		return Missing("transaction")
	}
	r.Transaction = tx
	verb, present, err := r.stringField("janus")
	if err != nil {
		return err
	}
	if !present {
		return Errorf(ErrMissingRequest, "Missing request (janus)")
	}
	r.Verb, r.Janus = verb, strings.ToLower(verb)
	if !verbs[r.Janus] {
		return UnknownVerb(verb)
	}
	return nil
}

// readCredentials reads the secrets and token of a request whose verb is unknown, leniently: Janus
// does not type-check the members of a verb it does not know, and a credential that is not a
// string is simply not a valid one (403 when it is needed).
func (r *Request) readCredentials() {
	r.APISecret, _, _ = r.stringField("apisecret")
	r.Token, _, _ = r.stringField("token")
	r.AdminSecret, _, _ = r.stringField("admin_secret")
}

// decodeMembers type-checks every optional member strata reads.
func (r *Request) decodeMembers() *Error {
	var err *Error
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"apisecret", &r.APISecret}, {"token", &r.Token}, {"admin_secret", &r.AdminSecret},
		{"plugin", &r.Plugin}, {"opaque_id", &r.OpaqueID},
	} {
		if *s.dst, _, err = r.stringField(s.name); err != nil {
			return err
		}
	}
	if r.ID, err = r.uintField("id"); err != nil {
		return err
	}
	for _, o := range []struct {
		name string
		dst  *json.RawMessage
	}{{"body", &r.Body}, {"jsep", &r.JSEP}, {"candidate", &r.Candidate}} {
		if *o.dst, err = r.objectField(o.name); err != nil {
			return err
		}
	}
	if raw, ok := r.Fields["candidates"]; ok {
		if json.Unmarshal(raw, &r.Candidates) != nil || r.Candidates == nil {
			return WrongType("candidates", "an array")
		}
	}
	return nil
}

// stringField returns a string member; present reports whether the member exists at all.
func (r *Request) stringField(name string) (v string, present bool, err *Error) {
	raw, ok := r.Fields[name]
	if !ok {
		return "", false, nil
	}
	if json.Unmarshal(raw, &v) != nil || isNull(raw) {
		return "", true, WrongType(name, "a string")
	}
	return v, true, nil
}

// uintField returns a non-negative integer member (0 when absent or null, as Janus reads ids).
func (r *Request) uintField(name string) (uint64, *Error) {
	raw, ok := r.Fields[name]
	if !ok || isNull(raw) {
		return 0, nil
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, WrongType(name, "a positive integer")
	}
	return v, nil
}

// objectField returns a member that must be a JSON object.
func (r *Request) objectField(name string) (json.RawMessage, *Error) {
	raw, ok := r.Fields[name]
	if !ok {
		return nil, nil
	}
	if !IsObject(raw) {
		return nil, WrongType(name, "an object")
	}
	return raw, nil
}

// IsObject reports whether raw (valid JSON) is an object.
func IsObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
