// Package plugin is the seam between the gateway core and its plugins, in the shape of Janus's plugin
// API: the core owns sessions, handles, transports and the PeerConnection's lifecycle; a plugin gets
// handle lifecycle calls and messages (body plus optional JSEP) and pushes events back. The gateway
// knows nothing of rooms or media routing; plugins know nothing of transports.
package plugin

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/strata-rtc/strata/internal/peer"
)

// Plugin is one loaded plugin, e.g. janus.plugin.echotest.
type Plugin interface {
	// Package is the Janus package name clients attach to ("janus.plugin.echotest").
	Package() string
	// Info describes the plugin in the `info` reply.
	Info() Info
	// Attach creates the plugin's state for a newly attached handle. An error becomes core error 461.
	Attach(h Handle) (Session, error)
	// Destroy is called once when the server shuts down.
	Destroy()
}

// AdminMessenger is implemented by plugins that answer the admin API's message_plugin request.
type AdminMessenger interface {
	AdminMessage(ctx context.Context, request json.RawMessage) (response any)
}

// PeerOptioner is implemented by plugins whose handles' PeerConnections need options of their own
// (the SIP and NoSIP bridges' audio formats). The gateway creates every handle's PeerConnection
// with them, whoever asks first: a trickle can arrive before the message that carries the offer.
type PeerOptioner interface {
	PeerOptions() []peer.PeerOption
}

// Info is what `info` reports about a plugin.
type Info struct {
	Name          string `json:"name"`
	Author        string `json:"author"`
	Description   string `json:"description"`
	VersionString string `json:"version_string"`
	Version       int    `json:"version"`
}

// JSEP is a session description as carried by the Janus API.
type JSEP struct {
	Type    string          `json:"type"`
	SDP     string          `json:"sdp"`
	Trickle *bool           `json:"trickle,omitempty"`
	SVC     json.RawMessage `json:"svc,omitempty"`
	// E2EE, RIDOrder and ForceRelay are passed through untouched.
	E2EE       bool   `json:"e2ee,omitempty"`
	RIDOrder   string `json:"rid_order,omitempty"`
	ForceRelay bool   `json:"force_relay,omitempty"`
}

// Message is one `message` request for a plugin. The gateway has already checked that the JSEP (if
// any) has a known type and parses as SDP.
type Message struct {
	Transaction string
	Body        json.RawMessage
	JSEP        *JSEP
}

// Result is a plugin's immediate answer to a Message, as in Janus: either synchronous data (a
// `success` carrying plugindata), or "async" (an `ack`, the result following later as an event pushed
// through Handle.PushEvent with the same transaction), or a core error.
type Result struct {
	// Async means: answer with `ack` (optionally with Hint); the plugin will push the result.
	Async bool
	Hint  string
	// Data is the plugindata.data of a synchronous reply. Plugin-level errors go here too, as
	// {"<plugin>":"event","error_code":N,"error":"..."}, exactly like Janus.
	Data any
	// CoreError, when non-zero, makes the gateway answer with a Janus core error instead (e.g. 462,
	// 465, 469) and CoreReason as the reason.
	CoreError  int
	CoreReason string
}

// Sync is a synchronous reply carrying data.
func Sync(data any) Result { return Result{Data: data} }

// Async is an asynchronous reply: `ack` now, an event later.
func Async(hint string) Result { return Result{Async: true, Hint: hint} }

// Handle is the gateway's view of one attached handle, given to the plugin.
type Handle interface {
	// ID is the handle id; SessionID the id of its session; OpaqueID what the client set on attach.
	ID() uint64
	SessionID() uint64
	OpaqueID() string
	// PushEvent sends {"janus":"event","sender":ID,"transaction":tx,"plugindata":{...},"jsep":...}
	// to whichever transport owns the session. tx may be empty for unsolicited events.
	PushEvent(tx string, data any, jsep *JSEP) error
	// Peer returns this handle's PeerConnection, creating it on first use from the server's media
	// configuration and opts (which only count at creation: e.g. a PeerConnection that only sends
	// needs no NACK generator). Plugins never touch Pion setup themselves.
	Peer(opts ...peer.PeerOption) (*peer.Peer, error)
	// ClosePeer hangs the PeerConnection up (if any) with a reason; the gateway sends `hangup`.
	ClosePeer(reason string)
	// Logger is a logger tagged with the session and handle ids.
	Logger() *slog.Logger
}

// Session is a plugin's state for one handle. The gateway serialises calls to HandleMessage per
// handle; the other methods may be called from the gateway's own goroutines.
type Session interface {
	// HandleMessage answers a `message` request.
	HandleMessage(ctx context.Context, m Message) Result
	// MediaReady is called once the PeerConnection is up (ICE and DTLS done; `webrtcup` sent).
	MediaReady()
	// MediaClosed is called when the PeerConnection goes away (hangup, ICE failure, DTLS alert).
	MediaClosed(reason string)
	// Detach is called when the handle is detached or its session destroyed. After it returns the
	// plugin must not use the Handle.
	Detach()
	// Query returns the plugin_specific part of the admin API's handle_info.
	Query() any
}

// Error is a plugin-level error as Janus plugins report it inside plugindata.
func Error(pluginShort string, code int, reason string) map[string]any {
	return map[string]any{pluginShort: "event", "error_code": code, "error": reason}
}

// Counts is what a plugin holds at one moment, for the metrics. A plugin leaves 0 what it has no
// notion of.
type Counts struct {
	Rooms int
	// Participants joined a room (videoroom publishers, publishing or not; audiobridge members).
	Participants int
	// Publishers are participants whose PeerConnection sends media (videoroom).
	Publishers int
	// Subscribers are handles receiving a room's media (videoroom subscriptions).
	Subscribers int
}

// Counter is implemented by plugins with rooms, for the metrics.
type Counter interface {
	Counts() Counts
}
