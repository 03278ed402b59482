// Package events is strata's version of Janus's event handlers: the gateway and the plugins emit
// typed events (sessions, handles, JSEP, WebRTC state, media, plugins, core) in Janus's event format,
// and each configured handler — an HTTP backend that POSTs them in batches with retries, as Janus's
// sample handler does, or a WebSocket client, as Janus's wsevh — delivers those its mask selects.
//
// Emitting never blocks: an event is marshalled once and offered to each interested handler's bounded
// queue; a full queue drops it and counts the drop. Each handler has one goroutine of its own that
// takes events from its queue and delivers them.
package events

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Type is an event type, a bit of the mask a handler subscribes with; the values are Janus's.
type Type uint32

// The event types (Janus's JANUS_EVENT_TYPE_*).
const (
	TypeSession   Type = 1 << 0
	TypeHandle    Type = 1 << 1
	TypeExternal  Type = 1 << 2
	TypeJSEP      Type = 1 << 3
	TypeWebRTC    Type = 1 << 4
	TypeMedia     Type = 1 << 5
	TypePlugin    Type = 1 << 6
	TypeTransport Type = 1 << 7
	TypeCore      Type = 1 << 8
)

// Subtypes of webrtc, media and core events (Janus's JANUS_EVENT_SUBTYPE_*).
const (
	SubtypeCoreStartup  = 1
	SubtypeCoreShutdown = 2

	SubtypeWebRTCICE   = 1
	SubtypeWebRTCLCand = 2
	SubtypeWebRTCRCand = 3
	SubtypeWebRTCPair  = 4
	SubtypeWebRTCDTLS  = 5
	SubtypeWebRTCState = 6

	SubtypeMediaState    = 1
	SubtypeMediaSlowLink = 2
	SubtypeMediaStats    = 3
)

// Mask is a set of event types.
type Mask uint32

// Mask values for "none" and "all" (Janus's JANUS_EVENT_TYPE_ALL sets every bit).
const (
	MaskNone Mask = 0
	MaskAll  Mask = 0xffffffff
)

// Has reports whether the mask selects type t.
func (m Mask) Has(t Type) bool { return uint32(m)&uint32(t) != 0 }

// labels are the names of the types in a mask string, as Janus's configuration spells them.
var labels = []struct {
	t     Type
	label string
}{
	{TypeSession, "sessions"}, {TypeHandle, "handles"}, {TypeExternal, "external"}, {TypeJSEP, "jsep"},
	{TypeWebRTC, "webrtc"}, {TypeMedia, "media"}, {TypePlugin, "plugins"}, {TypeTransport, "transports"},
	{TypeCore, "core"},
}

// ParseMask reads a mask as Janus's `events` option: "all", "none", or a comma-separated list of
// labels (sessions, handles, external, jsep, webrtc, media, plugins, transports, core), case and
// spaces around the labels ignored. Unlike Janus, which skips them silently, an unknown label is an
// error.
func ParseMask(s string) (Mask, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all":
		return MaskAll, nil
	case "none", "no_events", "":
		return MaskNone, nil
	}
	var m Mask
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		found := false
		for _, l := range labels {
			if strings.EqualFold(part, l.label) {
				m |= Mask(l.t)
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown event type %q (want all, none, or a list of %s)", part, labelList())
		}
	}
	return m, nil
}

// String is the mask as ParseMask reads it.
func (m Mask) String() string {
	if m == MaskAll {
		return "all"
	}
	var parts []string
	for _, l := range labels {
		if m.Has(l.t) {
			parts = append(parts, l.label)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

func labelList() string {
	names := make([]string, len(labels))
	for i, l := range labels {
		names[i] = l.label
	}
	return strings.Join(names, ", ")
}

// Event is one event as an emitter describes it; the Bus adds the emitter name and the timestamp.
// Body becomes the event's "event" member and is marshalled by Emit, so the emitter may reuse it
// afterwards.
type Event struct {
	Type      Type
	Subtype   int
	SessionID uint64
	HandleID  uint64
	OpaqueID  string
	Body      any
}

// wire is an event as handlers receive it, with Janus's member names and order.
type wire struct {
	Emitter   string `json:"emitter,omitempty"`
	Type      Type   `json:"type"`
	Subtype   int    `json:"subtype,omitempty"`
	Timestamp int64  `json:"timestamp"`
	SessionID uint64 `json:"session_id,omitempty"`
	HandleID  uint64 `json:"handle_id,omitempty"`
	OpaqueID  string `json:"opaque_id,omitempty"`
	Event     any    `json:"event"`
}

// Handler is one event handler: a backend with its own queue and goroutine.
type Handler interface {
	// Name is what query_eventhandler calls it by.
	Name() string
	// Mask is the set of types it currently wants (query_eventhandler's tweak changes it).
	Mask() Mask
	// Offer queues one marshalled event without blocking; false if the queue was full (the event
	// is dropped and counted).
	Offer(ev []byte) bool
	// Query answers a query_eventhandler request (nil: none was given) with a JSON object: Janus's
	// {"result":200} or {"error_code":..., "error":...}.
	Query(req json.RawMessage) any
	// Stats are the handler's counters.
	Stats() Stats
	// Close stops the handler, giving it up to timeout to deliver what it holds.
	Close(timeout time.Duration)
}

// Stats are a handler's counters. Sent + Dropped + Lost + Queued (+ those in flight) is every event
// offered to it.
type Stats struct {
	Sent    uint64 `json:"sent"`    // events the backend took
	Dropped uint64 `json:"dropped"` // refused because the queue was full
	Lost    uint64 `json:"lost"`    // given up after max_retransmissions, or still held at Close
	Retries uint64 `json:"retries"` // failed delivery attempts
	Queued  int    `json:"queued"`  // waiting in the queue now
	// Connected: for a WebSocket backend, whether it is connected now.
	Connected *bool `json:"connected,omitempty"`
}

// Bus hands emitted events to the handlers. A nil *Bus is valid and emits nothing.
type Bus struct {
	emitter  string
	handlers []Handler
	log      *slog.Logger
	now      func() time.Time

	mu     sync.RWMutex
	closed bool
}

// NewBus makes a bus over handlers; emitter is the server name put in every event.
func NewBus(emitter string, handlers []Handler, log *slog.Logger) *Bus {
	if log == nil {
		log = slog.Default()
	}
	return &Bus{emitter: emitter, handlers: handlers, log: log, now: time.Now}
}

// Wants reports whether some handler wants events of type t, so that emitters can skip building
// events nobody takes.
func (b *Bus) Wants(t Type) bool {
	if b == nil {
		return false
	}
	for _, h := range b.handlers {
		if h.Mask().Has(t) {
			return true
		}
	}
	return false
}

// Emit stamps e and offers it to every handler whose mask selects its type. It never blocks.
func (b *Bus) Emit(e Event) {
	if !b.Wants(e.Type) {
		return
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return
	}
	w := wire{Emitter: b.emitter, Type: e.Type, Subtype: e.Subtype, Timestamp: b.now().UnixMicro(),
		SessionID: e.SessionID, HandleID: e.HandleID, OpaqueID: e.OpaqueID, Event: e.Body}
	if w.Event == nil {
		w.Event = struct{}{}
	}
	raw, err := json.Marshal(w)
	if err != nil {
		b.log.Warn("event cannot be encoded, not sent", "type", e.Type, "err", err)
		return
	}
	for _, h := range b.handlers {
		if h.Mask().Has(e.Type) {
			h.Offer(raw)
		}
	}
}

// Handler finds a handler by name.
func (b *Bus) Handler(name string) Handler {
	if b == nil {
		return nil
	}
	for _, h := range b.handlers {
		if h.Name() == name {
			return h
		}
	}
	return nil
}

// Handlers lists the handlers.
func (b *Bus) Handlers() []Handler {
	if b == nil {
		return nil
	}
	return b.handlers
}

// Close stops emitting and closes every handler, each given up to timeout to deliver what it holds.
func (b *Bus) Close(timeout time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	already := b.closed
	b.closed = true
	b.mu.Unlock()
	if already {
		return
	}
	var wg sync.WaitGroup
	for _, h := range b.handlers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Close(timeout)
		}()
	}
	wg.Wait()
}
