package janusclient

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Event is any message from the server: a reply (success, ack, error, pong, server_info) or an
// event (event, webrtcup, media, slowlink, hangup, detached, trickle, timeout, keepalive).
type Event struct {
	Janus       string          `json:"janus"`
	Transaction string          `json:"transaction,omitempty"`
	SessionID   uint64          `json:"session_id,omitempty"`
	Sender      uint64          `json:"sender,omitempty"`
	Hint        string          `json:"hint,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	PluginData  *PluginData     `json:"plugindata,omitempty"`
	JSEP        *JSEP           `json:"jsep,omitempty"`
	Error       *Error          `json:"error,omitempty"`

	// Members of webrtcup/media/slowlink/hangup/trickle events.
	Mid       string          `json:"mid,omitempty"`
	Type      string          `json:"type,omitempty"`
	Receiving *bool           `json:"receiving,omitempty"`
	Media     string          `json:"media,omitempty"`
	Uplink    *bool           `json:"uplink,omitempty"`
	Lost      int             `json:"lost,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Candidate json.RawMessage `json:"candidate,omitempty"`

	// Raw is the message as received.
	Raw json.RawMessage `json:"-"`
}

// PluginData is the plugindata member: the plugin's package name and its data.
type PluginData struct {
	Plugin string          `json:"plugin"`
	Data   json.RawMessage `json:"data"`
}

// JSEP is a session description as the Janus API carries it.
type JSEP struct {
	Type    string `json:"type"`
	SDP     string `json:"sdp"`
	Trickle *bool  `json:"trickle,omitempty"`
}

// Candidate is one trickled ICE candidate (the browser's RTCIceCandidateInit).
type Candidate struct {
	Candidate     string  `json:"candidate"`
	SDPMid        *string `json:"sdpMid,omitempty"`
	SDPMLineIndex *uint16 `json:"sdpMLineIndex,omitempty"`
}

// Error is a Janus core error ({"janus":"error","error":{"code":N,"reason":"..."}}).
type Error struct {
	Code   int    `json:"code"`
	Reason string `json:"reason"`
}

func (e *Error) Error() string { return fmt.Sprintf("janus error %d: %s", e.Code, e.Reason) }

// PluginError is a plugin-level error, carried inside plugindata.data as error_code and error.
type PluginError struct {
	Plugin string
	Code   int
	Reason string
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("%s error %d: %s", e.Plugin, e.Code, e.Reason)
}

// Code returns the Janus code of a core or plugin error, or 0.
func Code(err error) int {
	var je *Error
	if errors.As(err, &je) {
		return je.Code
	}
	var pe *PluginError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return 0
}

// PluginError returns the plugin error the event carries, or nil.
func (e *Event) PluginError() *PluginError {
	if e == nil || e.PluginData == nil {
		return nil
	}
	var d struct {
		Code   *int   `json:"error_code"`
		Reason string `json:"error"`
	}
	if json.Unmarshal(e.PluginData.Data, &d) != nil || d.Code == nil {
		return nil
	}
	return &PluginError{Plugin: e.PluginData.Plugin, Code: *d.Code, Reason: d.Reason}
}

// DecodeData unmarshals plugindata.data into v.
func (e *Event) DecodeData(v any) error {
	if e == nil || e.PluginData == nil {
		return errors.New("janusclient: event has no plugindata")
	}
	return json.Unmarshal(e.PluginData.Data, v)
}

// decodeEvents reads one message or an array of messages (a long-poll reply with maxev > 1).
func decodeEvents(b []byte) ([]*Event, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		raws = []json.RawMessage{b}
	}
	out := make([]*Event, 0, len(raws))
	for _, r := range raws {
		ev := &Event{}
		if err := json.Unmarshal(r, ev); err != nil {
			return out, fmt.Errorf("janusclient: bad message from server: %w", err)
		}
		ev.Raw = append(json.RawMessage(nil), r...)
		out = append(out, ev)
	}
	return out, nil
}
