package echotest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Janus's echotest error codes.
const (
	ErrNoMessage      = 411
	ErrInvalidJSON    = 412
	ErrInvalidElement = 413
	ErrInvalidSDP     = 414
	ErrUnknown        = 499
)

// requestError is a plugin-level error, reported inside plugindata.
type requestError struct {
	code   int
	reason string
}

func (e *requestError) Error() string { return fmt.Sprintf("%d: %s", e.code, e.reason) }

// request is the echotest's single request; every field is optional.
type request struct {
	Audio, Video, Record, SVC, OpusRed                           *bool
	Bitrate, Substream, Temporal, Fallback, Spatial, TemporalSVC *int64
	MinDelay, MaxDelay                                           *int64
	AudioCodec, VideoCodec, VideoProfile, Filename               *string
}

type fieldKind int

const (
	kindBool fieldKind = iota
	kindPositive
	kindInteger
	kindString
)

// fields lists the request's attributes with their JSON types, in the order Janus validates them.
var fields = []struct {
	name string
	kind fieldKind
}{
	{"audio", kindBool}, {"video", kindBool}, {"bitrate", kindPositive}, {"record", kindBool},
	{"filename", kindString}, {"substream", kindPositive}, {"temporal", kindPositive},
	{"fallback", kindPositive}, {"svc", kindBool}, {"spatial_layer", kindPositive},
	{"temporal_layer", kindPositive}, {"audiocodec", kindString}, {"videocodec", kindString},
	{"videoprofile", kindString}, {"opusred", kindBool}, {"min_delay", kindInteger}, {"max_delay", kindInteger},
}

// actionable are the attributes that make a request without an offer meaningful (Janus's list).
var actionable = []string{
	"audio", "video", "videocodec", "videoprofile", "opusred", "bitrate", "substream", "temporal",
	"fallback", "spatial_layer", "temporal_layer", "record", "min_delay", "max_delay",
}

var typeNames = map[fieldKind]string{
	kindBool: "a boolean", kindPositive: "a positive integer", kindInteger: "an integer", kindString: "a string",
}

// parseRequest validates a message body the way Janus's echotest does. hasOffer says whether a JSEP
// came with it (then no attribute is needed).
func parseRequest(body json.RawMessage, hasOffer bool) (*request, *requestError) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, &requestError{ErrNoMessage, "No message??"}
	}
	var raw map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &raw) != nil {
		return nil, &requestError{ErrInvalidJSON, "JSON error: not an object"}
	}
	r := &request{}
	for _, f := range fields {
		v, ok := raw[f.name]
		if !ok {
			continue
		}
		if err := r.set(f.name, f.kind, v); err != nil {
			return nil, err
		}
	}
	layers := []struct {
		name  string
		value *int64
	}{{"substream", r.Substream}, {"temporal", r.Temporal}, {"spatial_layer", r.Spatial}, {"temporal_layer", r.TemporalSVC}}
	for _, l := range layers {
		if l.value != nil && *l.value > 2 {
			return nil, &requestError{ErrInvalidElement, fmt.Sprintf("Invalid value (%s should be 0, 1 or 2)", l.name)}
		}
	}
	if !hasOffer && !anyPresent(raw, actionable) {
		return nil, &requestError{ErrInvalidElement, "Message error: no supported attributes found"}
	}
	return r, nil
}

func anyPresent(raw map[string]json.RawMessage, names []string) bool {
	for _, n := range names {
		if _, ok := raw[n]; ok {
			return true
		}
	}
	return false
}

func (r *request) set(name string, kind fieldKind, v json.RawMessage) *requestError {
	bad := &requestError{ErrInvalidElement, fmt.Sprintf("Invalid element type (%s should be %s)", name, typeNames[kind])}
	switch kind {
	case kindBool:
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return bad
		}
		*r.boolField(name) = &b
	case kindPositive, kindInteger:
		var n int64
		if !isJSONInteger(v) || json.Unmarshal(v, &n) != nil || (kind == kindPositive && n < 0) {
			return bad
		}
		*r.intField(name) = &n
	case kindString:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return bad
		}
		*r.stringField(name) = &s
	}
	return nil
}

// isJSONInteger rejects 1.0, 1e3 and strings, as Janus's integer check does.
func isJSONInteger(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return false
	}
	for i, c := range v {
		if (c < '0' || c > '9') && (i > 0 || c != '-') {
			return false
		}
	}
	return true
}

func (r *request) boolField(name string) **bool {
	switch name {
	case "audio":
		return &r.Audio
	case "video":
		return &r.Video
	case "record":
		return &r.Record
	case "svc":
		return &r.SVC
	default:
		return &r.OpusRed
	}
}

func (r *request) intField(name string) **int64 {
	switch name {
	case "bitrate":
		return &r.Bitrate
	case "substream":
		return &r.Substream
	case "temporal":
		return &r.Temporal
	case "fallback":
		return &r.Fallback
	case "spatial_layer":
		return &r.Spatial
	case "temporal_layer":
		return &r.TemporalSVC
	case "min_delay":
		return &r.MinDelay
	default:
		return &r.MaxDelay
	}
}

func (r *request) stringField(name string) **string {
	switch name {
	case "audiocodec":
		return &r.AudioCodec
	case "videocodec":
		return &r.VideoCodec
	case "videoprofile":
		return &r.VideoProfile
	default:
		return &r.Filename
	}
}
