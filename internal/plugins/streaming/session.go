package streaming

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
)

const (
	// queueSize bounds the asynchronous requests waiting for one handle.
	queueSize = 32
	// negotiateTimeout bounds one offer (half-trickle waits for candidate gathering).
	negotiateTimeout = 30 * time.Second
)

// session is the streaming state of one handle: a viewer of at most one mountpoint at a time.
// Asynchronous requests run in order on the session's goroutine.
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger

	q *plugin.Queue // the asynchronous requests

	events plugin.Pusher // nothing is pushed after Detach

	mu sync.Mutex
	v  *viewer // nil: not watching
}

func newSession(p *Plugin, h plugin.Handle) *session {
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	s := &session{p: p, h: h, log: log.With("plugin", Short)}
	s.q = plugin.NewQueue(queueSize, s.process)
	return s
}

// HandleMessage answers synchronous requests at once and queues asynchronous ones (acked, their
// result or error pushed as an event).
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	if len(m.Body) == 0 {
		return plugin.Sync(errorf(ErrNoMessage, "No message??").Data(Short))
	}
	name, b, err := Decode(m.Body)
	if err != nil {
		return plugin.Sync(err.Data(Short))
	}
	if !Asynchronous(name) {
		return plugin.Sync(s.p.handleSync(name, b, m.Body))
	}
	if err := s.q.Enqueue(m); err != nil {
		return plugin.Sync(errorf(ErrUnknown, "%s", err).Data(Short))
	}
	return plugin.Async("")
}

func (s *session) process(m plugin.Message) {
	name, b, _ := Decode(m.Body) // checked by HandleMessage
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	if err := s.dispatch(ctx, m.Transaction, name, b, m.JSEP); err != nil {
		s.push(m.Transaction, err.Data(Short), nil)
	}
}

// dispatch runs one asynchronous request in Janus's order of checks: the handle's state first for
// configure and switch, then the request's table, then the request.
func (s *session) dispatch(ctx context.Context, tx, name string, b plugin.Body, jsep *plugin.JSEP) *Error {
	v := s.viewer()
	if v == nil && (name == "configure" || name == "switch" || name == "start" || name == "pause") {
		return NotWatching(name)
	}
	if name == "switch" && !v.mp.rtpLive() {
		return errorf(ErrCantSwitch, "Can't switch: not on a live RTP mountpoint")
	}
	req, err := ParseBody(name, b)
	if err != nil {
		return err
	}
	switch r := req.(type) {
	case *Watch:
		return s.watch(ctx, tx, r, jsep)
	case *Start:
		return v.start(tx, jsep)
	case *Pause:
		v.pause(true)
		s.push(tx, result("status", "pausing"), nil)
	case *Configure:
		return v.configure(tx, r)
	case *Switch:
		return v.switchTo(tx, r)
	case *Stop:
		// Janus ignores a stop before the PeerConnection is up or while one is under way: the
		// ack is all the viewer gets.
		if v == nil || !v.beginStop() {
			return nil
		}
		s.push(tx, result("status", "stopping"), nil)
		s.h.ClosePeer(closePC)
	}
	return nil
}

// closePC is the reason of the hangups the plugin asks for (stop, destroy, kick, kick_all): Janus's
// core says "Close PC" for each.
const closePC = "Close PC"

// result is {"streaming":"event","result":{k:v}}.
func result(k string, v any) map[string]any {
	return map[string]any{Short: "event", "result": map[string]any{k: v}}
}

func (s *session) viewer() *viewer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

// push sends an event unless the handle is detached.
func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("streaming event not delivered", "err", err)
	}
}

// MediaReady: the viewer's PeerConnection is up.
func (s *session) MediaReady() {
	if v := s.viewer(); v != nil {
		v.mediaUp()
	}
}

// MediaClosed: the PeerConnection went away; the viewer stops watching. Nothing is pushed: Janus
// says "stopped" only when the mountpoint goes away (endViewing), not on a hangup.
func (s *session) MediaClosed(string) {
	if v := s.viewer(); v != nil {
		s.stopViewing(v)
	}
}

// stopViewing ends v if it is still the session's viewer.
func (s *session) stopViewing(v *viewer) {
	s.mu.Lock()
	if s.v != v {
		s.mu.Unlock()
		return
	}
	s.v = nil
	s.mu.Unlock()
	v.close()
}

// endViewing ends the viewing of mp from outside (destroy, kick, kick_all): the viewer is told
// status and hung up.
func (s *session) endViewing(mp *mountpoint, status string) {
	v := s.viewer()
	if v == nil || v.currentMountpoint() != mp {
		return
	}
	s.stopViewing(v)
	s.push("", result("status", status), nil)
	s.h.ClosePeer(closePC)
}

// Detach: the handle is gone.
func (s *session) Detach() {
	if s.events.Detach() {
		return
	}
	s.q.Close()
	if v := s.viewer(); v != nil {
		s.stopViewing(v)
	}
	s.p.forget(s)
}

// Query is the handle's plugin_specific part of handle_info.
func (s *session) Query() any {
	v := s.viewer()
	if v == nil {
		return map[string]any{"state": "idle"}
	}
	return v.query()
}
