package janus

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// Message is one outgoing Janus message: a reply (success, ack, error, pong, server_info) or an event
// (event, webrtcup, media, slowlink, hangup, detached, trickle, timeout, keepalive). It marshals with
// the members in the order Janus writes them: janus, session_id, transaction, sender, hint, data,
// plugindata, jsep, error, then Extra members sorted by name. Zero members are left out, except that
// Extra members are always written.
type Message struct {
	Janus       string
	SessionID   uint64
	Transaction string
	Sender      uint64
	Hint        string
	Data        any
	PluginData  *PluginData
	JSEP        any
	Error       *Error
	// Extra holds further top-level members: a media event's mid/type/receiving, server_info's
	// fields, an admin reply's sessions or info.
	Extra map[string]any
}

// PluginData is the plugindata member of a plugin's reply or event.
type PluginData struct {
	Plugin string `json:"plugin"`
	Data   any    `json:"data"`
}

// ErrorReply is {"janus":"error","session_id":S,"transaction":T,"error":{...}}.
func ErrorReply(sessionID uint64, tx string, err *Error) Message {
	return Message{Janus: "error", SessionID: sessionID, Transaction: tx, Error: err}
}

// Get returns an Extra member (nil if absent); handy in tests and sinks.
func (m Message) Get(name string) any { return m.Extra[name] }

// With returns a copy of m with one more Extra member.
func (m Message) With(name string, v any) Message {
	extra := make(map[string]any, len(m.Extra)+1)
	for k, x := range m.Extra {
		extra[k] = x
	}
	extra[name] = v
	m.Extra = extra
	return m
}

// MarshalJSON writes the envelope in Janus's member order.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"janus":`)
	b.Write(quote(m.Janus))
	if m.SessionID != 0 {
		b.WriteString(`,"session_id":`)
		b.WriteString(strconv.FormatUint(m.SessionID, 10))
	}
	if m.Transaction != "" {
		b.WriteString(`,"transaction":`)
		b.Write(quote(m.Transaction))
	}
	if m.Sender != 0 {
		b.WriteString(`,"sender":`)
		b.WriteString(strconv.FormatUint(m.Sender, 10))
	}
	if m.Hint != "" {
		b.WriteString(`,"hint":`)
		b.Write(quote(m.Hint))
	}
	members := []struct {
		name string
		v    any
		set  bool
	}{
		{"data", m.Data, m.Data != nil},
		{"plugindata", m.PluginData, m.PluginData != nil},
		{"jsep", m.JSEP, m.JSEP != nil},
		{"error", m.Error, m.Error != nil},
	}
	for _, mem := range members {
		if mem.set {
			if err := writeMember(&b, mem.name, mem.v); err != nil {
				return nil, err
			}
		}
	}
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := writeMember(&b, k, m.Extra[k]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeMember(b *bytes.Buffer, name string, v any) error {
	enc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.WriteByte(',')
	b.Write(quote(name))
	b.WriteByte(':')
	b.Write(enc)
	return nil
}

func quote(s string) []byte {
	q, _ := json.Marshal(s) // marshalling a string cannot fail
	return q
}

// Encode marshals a message, falling back to a 490 error envelope if a member cannot be marshalled
// (a plugin put a channel in its data, say), so a transport always has something valid to send.
func Encode(m Message) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		fallback := ErrorReply(m.SessionID, m.Transaction, Errorf(ErrUnknown, "Cannot encode reply: %v", err))
		b, _ = json.Marshal(fallback)
	}
	return b
}
