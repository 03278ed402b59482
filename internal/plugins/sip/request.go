package sip

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/strata-rtc/strata/internal/plugin"
)

// The parameter tables of Janus's janus_sip.c, in its order: the first bad element is reported.
var (
	registerParams = []plugin.Param{
		{Name: "type", Kind: plugin.String}, {Name: "send_register", Kind: plugin.Bool},
		{Name: "force_udp", Kind: plugin.Bool}, {Name: "force_tcp", Kind: plugin.Bool},
		{Name: "sips", Kind: plugin.Bool}, {Name: "rfc2543_cancel", Kind: plugin.Bool},
		{Name: "username", Kind: plugin.String, Required: true}, {Name: "secret", Kind: plugin.String},
		{Name: "ha1_secret", Kind: plugin.String}, {Name: "authuser", Kind: plugin.String},
		{Name: "display_name", Kind: plugin.String}, {Name: "user_agent", Kind: plugin.String},
		{Name: "headers", Kind: plugin.Object}, {Name: "contact_params", Kind: plugin.Object},
		{Name: "master_id", Kind: plugin.Integer}, {Name: "refresh", Kind: plugin.Bool},
		{Name: "incoming_header_prefixes", Kind: plugin.Array}, {Name: "register_ttl", Kind: plugin.Integer},
	}
	proxyParams = []plugin.Param{{Name: "proxy", Kind: plugin.String}, {Name: "outbound_proxy", Kind: plugin.String}}
	callParams  = []plugin.Param{
		{Name: "uri", Kind: plugin.String, Required: true}, {Name: "headers", Kind: plugin.Object},
		{Name: "call_id", Kind: plugin.String}, {Name: "srtp", Kind: plugin.String},
		{Name: "srtp_profile", Kind: plugin.String}, {Name: "autoaccept_reinvites", Kind: plugin.Bool},
		{Name: "refer_id", Kind: plugin.Integer}, {Name: "secret", Kind: plugin.String},
		{Name: "ha1_secret", Kind: plugin.String}, {Name: "authuser", Kind: plugin.String},
	}
	acceptParams = []plugin.Param{
		{Name: "srtp", Kind: plugin.String}, {Name: "headers", Kind: plugin.Object},
		{Name: "autoaccept_reinvites", Kind: plugin.Bool},
	}
	declineParams = []plugin.Param{
		{Name: "code", Kind: plugin.Integer}, {Name: "headers", Kind: plugin.Object}, {Name: "refer_id", Kind: plugin.Integer},
	}
	transferParams  = []plugin.Param{{Name: "uri", Kind: plugin.String, Required: true}, {Name: "call_id", Kind: plugin.String}}
	holdParams      = []plugin.Param{{Name: "direction", Kind: plugin.String}}
	recordingParams = []plugin.Param{
		{Name: "action", Kind: plugin.String, Required: true}, {Name: "audio", Kind: plugin.Bool},
		{Name: "video", Kind: plugin.Bool}, {Name: "peer_audio", Kind: plugin.Bool},
		{Name: "peer_video", Kind: plugin.Bool}, {Name: "send_peer_pli", Kind: plugin.Bool},
		{Name: "filename", Kind: plugin.String},
	}
	dtmfInfoParams = []plugin.Param{
		{Name: "digit", Kind: plugin.String, Required: true}, {Name: "duration", Kind: plugin.Positive},
		{Name: "headers", Kind: plugin.Object},
	}
	infoParams = []plugin.Param{
		{Name: "type", Kind: plugin.String, Required: true}, {Name: "content", Kind: plugin.String, Required: true},
		{Name: "headers", Kind: plugin.Object},
	}
	messageParams = []plugin.Param{
		{Name: "content_type", Kind: plugin.String}, {Name: "content", Kind: plugin.String, Required: true},
		{Name: "uri", Kind: plugin.String}, {Name: "headers", Kind: plugin.Object}, {Name: "call_id", Kind: plugin.String},
	}
	hangupParams = []plugin.Param{{Name: "headers", Kind: plugin.Object}}
)

// tables maps each request to its parameters; a request not here is unknown (442).
var tables = map[string][]plugin.Param{
	"register": registerParams, "unregister": nil, "call": callParams, "accept": acceptParams,
	"progress": acceptParams, "decline": declineParams, "hold": holdParams, "unhold": nil, "update": nil,
	"message": messageParams, "info": infoParams, "dtmf_info": dtmfInfoParams, "transfer": transferParams,
	"recording": recordingParams, "keyframe": nil, "hangup": hangupParams,
}

// decodeRequest is the start of every request: Janus's validation of the body and of the request's
// own table.
func decodeRequest(raw json.RawMessage) (string, plugin.Body, *plugin.RequestError) {
	name, b, err := plugin.DecodeRequest(raw, &codes)
	if err != nil {
		return "", b, err
	}
	params, ok := tables[name]
	if !ok {
		return "", b, plugin.Errorf(ErrInvalidRequest, "Unknown request (%s)", b.Str("request"))
	}
	if late[name] {
		return name, b, nil
	}
	if err := b.Validate(params...); err != nil {
		return "", b, err
	}
	return name, b, nil
}

// late are the requests Janus validates only after checking the call's state: their handlers
// call Validate(tables[name]...) themselves.
var late = map[string]bool{"call": true, "accept": true, "progress": true}

// header is one custom header of a request's "headers" object.
type header struct{ name, value string }

// customHeaders reads a "headers" object: string values only, and only names and values that
// cannot break the message (no CR, LF or colon in names), as the SIP message must stay one message.
func customHeaders(raw json.RawMessage) []header {
	m := object(raw, "headers")
	out := make([]header, 0, len(m))
	for k, raw := range m {
		var v string
		if json.Unmarshal(raw, &v) != nil || !token(k) || strings.ContainsAny(v, "\r\n") {
			continue
		}
		out = append(out, header{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// stringMap reads an object of strings (contact_params), skipping what is not a safe token.
func stringMap(raw json.RawMessage, key string) map[string]string {
	m := object(raw, key)
	out := map[string]string{}
	for k, raw := range m {
		var v string
		if json.Unmarshal(raw, &v) == nil && token(k) && (v == "" || token(v)) {
			out[k] = v
		}
	}
	return out
}

// token: a SIP token (RFC 3261 25.1), the only safe header or parameter name.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && !strings.ContainsRune("-.!%*_+`'~", rune(c)) {
			return false
		}
	}
	return true
}

// object is the element key of the request raw as an object of raw values; nil if it is none.
func object(raw json.RawMessage, key string) map[string]json.RawMessage {
	var top map[string]json.RawMessage
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || json.Unmarshal(top[key], &m) != nil {
		return nil
	}
	return m
}
