package janusclient

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

var jsonUnmarshal = json.Unmarshal

// Session is one Janus session.
type Session struct {
	// ID is the session id the server assigned.
	ID uint64
	c  *Client

	mu      sync.Mutex
	handles map[uint64]*Handle
	events  chan *Event
	done    chan struct{}
	ended   bool
}

func newSession(c *Client, id uint64) *Session {
	return &Session{ID: id, c: c, handles: map[uint64]*Handle{}, events: make(chan *Event, eventBuffer), done: make(chan struct{})}
}

// Events delivers the session's unsolicited events that concern no handle (e.g. timeout). It is
// closed when the session is destroyed, times out, or the client closes.
func (s *Session) Events() <-chan *Event { return s.events }

// Attach attaches a handle to a plugin ("janus.plugin.echotest").
func (s *Session) Attach(ctx context.Context, plugin string) (*Handle, error) {
	return s.AttachOpaque(ctx, plugin, "")
}

// AttachOpaque attaches with an opaque_id, as janus.js demos do.
func (s *Session) AttachOpaque(ctx context.Context, plugin, opaqueID string) (*Handle, error) {
	msg := map[string]any{"janus": "attach", "plugin": plugin}
	if opaqueID != "" {
		msg["opaque_id"] = opaqueID
	}
	ev, err := s.c.request(ctx, s.ID, 0, msg, false)
	if err != nil {
		return nil, err
	}
	id, err := dataID(ev)
	if err != nil {
		return nil, err
	}
	h := &Handle{ID: id, Plugin: plugin, s: s, events: make(chan *Event, eventBuffer)}
	s.mu.Lock()
	s.handles[id] = h
	s.mu.Unlock()
	return h, nil
}

// Keepalive refreshes the session on the server.
func (s *Session) Keepalive(ctx context.Context) error {
	_, err := s.c.request(ctx, s.ID, 0, map[string]any{"janus": "keepalive"}, false)
	return err
}

// Claim moves the session to this connection (e.g. after a WebSocket reconnect).
func (s *Session) Claim(ctx context.Context) error {
	_, err := s.c.request(ctx, s.ID, 0, map[string]any{"janus": "claim"}, false)
	return err
}

// Destroy destroys the session on the server and stops its event delivery.
func (s *Session) Destroy(ctx context.Context) error {
	_, err := s.c.request(ctx, s.ID, 0, map[string]any{"janus": "destroy"}, false)
	s.c.forget(s.ID)
	s.shutdown()
	return err
}

// shutdown closes the session's and its handles' event channels, once.
func (s *Session) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	close(s.done)
	close(s.events)
	for _, h := range s.handles {
		h.shutdownLocked()
	}
}

// deliver hands an event to its handle or the session; false if it had to be dropped.
func (s *Session) deliver(ev *Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return true
	}
	ch := s.events
	var h *Handle
	if ev.Sender != 0 {
		if h = s.handles[ev.Sender]; h != nil {
			if h.ended {
				return true
			}
			ch = h.events
		}
	}
	ok := true
	select {
	case ch <- ev:
	default:
		ok = false
	}
	switch {
	case ev.Janus == "timeout" && ev.Sender == 0:
		go func() { s.c.forget(s.ID); s.shutdown() }()
	case ev.Janus == "detached" && h != nil:
		delete(s.handles, h.ID)
		h.shutdownLocked()
	}
	return ok
}

// keepalive sends keepalives until the session ends.
func (s *Session) keepalive() {
	every := s.c.opts.keepalive
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			_ = s.Keepalive(ctx)
			cancel()
		}
	}
}

// Handle is one plugin handle.
type Handle struct {
	// ID is the handle id; Plugin the package attached to.
	ID     uint64
	Plugin string
	s      *Session
	events chan *Event
	ended  bool // guarded by s.mu
}

// Events delivers the handle's unsolicited events: webrtcup, media, slowlink, hangup, detached,
// trickle, and plugin events nobody waits for. It is closed after `detached` or when the session
// ends.
func (h *Handle) Events() <-chan *Event { return h.events }

func (h *Handle) shutdownLocked() {
	if !h.ended {
		h.ended = true
		close(h.events)
	}
}

// Message sends a plugin message (body and optional JSEP). A synchronous plugin reply (`success`)
// is returned as it is; after an `ack` Message waits for the event with the same transaction. A
// plugin error in the reply is returned as *PluginError, with the event.
func (h *Handle) Message(ctx context.Context, body any, jsep *JSEP) (*Event, error) {
	msg := map[string]any{"janus": "message", "body": body}
	if jsep != nil {
		msg["jsep"] = jsep
	}
	return h.s.c.request(ctx, h.s.ID, h.ID, msg, true)
}

// Trickle sends one candidate.
func (h *Handle) Trickle(ctx context.Context, c Candidate) error {
	_, err := h.s.c.request(ctx, h.s.ID, h.ID, map[string]any{"janus": "trickle", "candidate": c}, false)
	return err
}

// TrickleCandidates sends several candidates in one request.
func (h *Handle) TrickleCandidates(ctx context.Context, cs []Candidate) error {
	_, err := h.s.c.request(ctx, h.s.ID, h.ID, map[string]any{"janus": "trickle", "candidates": cs}, false)
	return err
}

// TrickleDone tells the server there are no more candidates ({"completed": true}).
func (h *Handle) TrickleDone(ctx context.Context) error {
	_, err := h.s.c.request(ctx, h.s.ID, h.ID, map[string]any{"janus": "trickle", "candidate": map[string]bool{"completed": true}}, false)
	return err
}

// Hangup closes the handle's PeerConnection; the handle stays attached.
func (h *Handle) Hangup(ctx context.Context) error {
	_, err := h.s.c.request(ctx, h.s.ID, h.ID, map[string]any{"janus": "hangup"}, false)
	return err
}

// Detach detaches the handle. Its Events channel closes when the `detached` event arrives.
func (h *Handle) Detach(ctx context.Context) error {
	_, err := h.s.c.request(ctx, h.s.ID, h.ID, map[string]any{"janus": "detach"}, false)
	return err
}
