package videocall

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

const (
	// queueSize bounds the requests waiting for one handle.
	queueSize = 32
	// negotiateTimeout bounds one negotiation (half-trickle waits for gathering).
	negotiateTimeout = 30 * time.Second
)

// session is the videocall state of one handle. Requests run in order on the handle's Queue, as
// on Janus's message thread: each is acked and its result pushed as an event.
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger
	q   *plugin.Queue

	events plugin.Pusher // nothing is pushed after Detach

	// audioActive and videoActive: this user's audio and video are relayed to the peer.
	audioActive, videoActive atomic.Bool
	bitrate                  atomic.Uint32 // the REMB cap sent to this user (0: none)

	// Guarded by the plugin's mu.
	username string
	peer     *session // the other user of the call being set up or in progress
	call     *call
	// want is the layer this user asked to receive (substream/temporal or the SVC layers).
	want policy.Layer

	recMu     sync.Mutex          // guards what follows
	recording *record.Participant // what this user sends, recorded (record.go); nil when not
	recNames  map[string]any      // handle_info's "recording": the .mjr file of each kind
}

func newSession(p *Plugin, h plugin.Handle) *session {
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	s := &session{p: p, h: h, log: log.With("plugin", short), want: policy.TopLayer}
	s.audioActive.Store(true)
	s.videoActive.Store(true)
	s.q = plugin.NewQueue(queueSize, s.process)
	return s
}

// HandleMessage queues the request and acknowledges it; the result follows as an event.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	if err := s.q.Enqueue(m); err != nil {
		return plugin.Sync(plugin.Error(short, ErrUnknown, err.Error()))
	}
	return plugin.Async("")
}

// MediaReady starts forwarding to this user: Pion drops what is written before DTLS is up.
func (s *session) MediaReady() {
	if c := s.currentCall(); c != nil {
		c.ready(s)
	}
}

// MediaClosed ends the call when this user's PeerConnection goes away; the peer hears
// "Remote WebRTC hangup", as in Janus.
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	if c := s.currentCall(); c != nil && !c.leg(s).closed() {
		// The gateway reports a closed PeerConnection after the requests queued before it: this
		// one belongs to an earlier call, and the user is already in a new one.
		return
	}
	s.endCall("Remote WebRTC hangup", false)
	s.audioActive.Store(true)
	s.videoActive.Store(true)
	s.bitrate.Store(0)
}

// Detach ends the call and frees the username.
func (s *session) Detach() {
	s.q.Close()
	s.endCall("Remote WebRTC hangup", false)
	s.events.Detach()
	s.p.forget(s)
}

// push sends an event unless the handle is detached.
func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

// result pushes {"videocall":"event","result":{...}}.
func (s *session) result(tx string, r map[string]any, jsep *plugin.JSEP) {
	s.push(tx, map[string]any{short: "event", "result": r}, jsep)
}

func (s *session) process(m plugin.Message) {
	if err := s.handle(m); err != nil {
		s.push(m.Transaction, err.Data(short), nil)
	}
}

func (s *session) handle(m plugin.Message) *plugin.RequestError {
	r, err := parseRequest(m.Body)
	if err != nil {
		return err
	}
	switch r.name {
	case "list":
		s.result(m.Transaction, map[string]any{"list": s.p.list()}, nil)
		return nil
	case "register":
		return s.register(m.Transaction, r)
	case "call":
		return s.startCall(m, r)
	case "accept":
		return s.accept(m)
	case "set":
		return s.set(m, r)
	case "hangup":
		s.hangup(m.Transaction, r)
		return nil
	}
	return plugin.Errorf(ErrInvalidRequest, "Unknown request (%s)", r.body.Str("request"))
}

func (s *session) register(tx string, r *request) *plugin.RequestError {
	s.p.mu.Lock()
	registered := s.username
	s.p.mu.Unlock()
	if registered != "" {
		return plugin.Errorf(ErrAlreadyRegistered, "Already registered (%s)", registered)
	}
	name, err := r.username()
	if err != nil {
		return err
	}
	if err := s.p.register(s, name); err != nil {
		return err
	}
	s.result(tx, map[string]any{"event": "registered", "username": name}, nil)
	return nil
}

// hangup ends the call (or refuses an incoming one): this user hears "Explicit hangup", the peer
// the request's reason ("We did the hangup" by default), as in Janus.
func (s *session) hangup(tx string, r *request) {
	reason := "We did the hangup"
	if r.body.Has("reason") {
		if v := r.body.OptStr("reason"); v != nil {
			reason = *v
		}
	}
	s.p.mu.Lock()
	name := s.username
	s.p.mu.Unlock()
	s.endCall(reason, true)
	s.result(tx, map[string]any{"event": "hangup", "username": name, "reason": "Explicit hangup"}, nil)
	s.h.ClosePeer("videocall hangup")
}

// currentCall is the call this session is in, if any.
func (s *session) currentCall() *call {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.call
}

// endCall takes this session and its peer out of their call: the peer hears a hangup with reason
// and its PeerConnection is closed; the call's media stops. explicit is only for logs.
func (s *session) endCall(reason string, explicit bool) {
	s.p.mu.Lock()
	peer, c, name := s.peer, s.call, s.username
	s.peer, s.call = nil, nil
	if peer != nil && peer.peer == s {
		peer.peer, peer.call = nil, nil
	}
	s.p.mu.Unlock()
	if c != nil {
		c.close()
	}
	s.stopRecording()
	if peer != nil {
		peer.stopRecording()
	}
	if peer == nil {
		return
	}
	s.log.Debug("call ended", "peer", peer.username, "reason", reason, "explicit", explicit)
	peer.h.ClosePeer("videocall hangup")
	peer.result("", map[string]any{"event": "hangup", "username": name, "reason": reason}, nil)
}

// Query is the plugin_specific part of handle_info.
func (s *session) Query() any {
	s.p.mu.Lock()
	q := map[string]any{
		"state":        "idle",
		"audio_active": s.audioActive.Load(),
		"video_active": s.videoActive.Load(),
		"bitrate":      s.bitrate.Load(),
	}
	if s.username != "" {
		q["username"] = s.username
	}
	if s.peer != nil {
		q["peer"] = s.peer.username
		q["state"] = "incall"
	}
	c := s.call
	s.p.mu.Unlock()
	if c != nil {
		// Data channel messages to this user that were dropped (data.go).
		q["data_dropped"] = c.leg(s).dataDropped()
	}
	s.recMu.Lock()
	if s.recNames != nil {
		q["recording"] = s.recNames
	}
	s.recMu.Unlock()
	return q
}
