package voicemail

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
)

const (
	// queueSize bounds the requests waiting for one handle.
	queueSize = 16
	// negotiateTimeout bounds answering one offer (half-trickle waits for gathering).
	negotiateTimeout = 30 * time.Second
)

// stopBody is the request the plugin sends itself when a message reaches its length limit, as
// Janus simulates a "stop" from the browser.
var stopBody = json.RawMessage(`{"request":"stop"}`)

// session is the voicemail state of one handle. Requests, the length limit and the end of the
// PeerConnection are handled in order on the session's own goroutine.
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger
	id  uint64 // the recording id: the message's file name, fixed per handle as in Janus

	queue  chan plugin.Message
	closed chan string // the PeerConnection went away (MediaClosed's reason)
	ready  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	limit  *time.Timer // the length limit; used by the work goroutine only

	events plugin.Pusher // nothing is pushed after Detach

	mu      sync.Mutex // guards what follows (read by Query)
	peer    *peer.Peer
	recv    *sfu.Receiver // the recorded audio (media.go)
	mid     string        // its m-line
	rec     *message      // the message being recorded, nil when idle
	started bool          // the PeerConnection is up (Janus's "started")
	startAt time.Time     // when it came up: the length limit counts from there
}

func newSession(p *Plugin, h plugin.Handle) *session {
	ctx, cancel := context.WithCancel(context.Background())
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	return &session{
		p: p, h: h, log: log.With("plugin", short), id: plugin.RandomID(),
		queue: make(chan plugin.Message, queueSize), closed: make(chan string, 1), ready: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
}

// HandleMessage queues the request; every answer is an event (Janus: all asynchronous).
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	select {
	case <-s.ctx.Done():
		return plugin.Sync(plugin.Error(short, ErrUnknown, "Handle detached"))
	default:
	}
	select {
	case s.queue <- m:
		return plugin.Async("")
	default:
		return plugin.Sync(plugin.Error(short, ErrUnknown, "Too many pending requests"))
	}
}

// MediaReady: the PeerConnection is up; "started" goes out and the length limit starts.
func (s *session) MediaReady() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// MediaClosed: the message ends (and is kept) without an event, as in Janus.
func (s *session) MediaClosed(reason string) {
	select {
	case s.closed <- reason:
	default:
	}
}

// Detach stops the session, keeping what was recorded; afterwards nothing touches the handle.
func (s *session) Detach() {
	s.cancel()
	<-s.done
	s.events.Detach()
	s.mediaDown()
	s.p.forget(s)
}

// Query is the plugin_specific part of handle_info, as Janus's.
func (s *session) Query() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := map[string]any{"state": "idle", "hangingup": 0, "destroyed": 0}
	if s.rec != nil {
		q["state"] = "recording"
		q["id"] = s.id
		q["filename"] = s.rec.out
		if s.started {
			q["start_time"] = s.startAt.UnixMicro()
		}
		if s.rec.rec != nil {
			q["dropped"] = s.rec.rec.Stats().Dropped
		}
	}
	return q
}

func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

func (s *session) pushError(tx string, err error) {
	var re *plugin.RequestError
	if !errors.As(err, &re) {
		re = plugin.Errorf(ErrUnknown, "%s", err.Error())
	}
	s.push(tx, re.Data(short), nil)
}

func status(st string) map[string]any { return map[string]any{short: "event", "status": st} }

// work handles requests, the PeerConnection's coming up and going, and the length limit, in order.
func (s *session) work() {
	defer close(s.done)
	s.limit = time.NewTimer(time.Hour)
	s.limit.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-s.queue:
			s.process(m)
		case <-s.ready:
			s.mediaUp()
		case <-s.closed:
			s.limit.Stop()
			s.mediaDown()
		case <-s.limit.C:
			s.process(plugin.Message{Body: stopBody})
		}
	}
}

// mediaUp tells the client recording has started and arms the length limit.
func (s *session) mediaUp() {
	s.mu.Lock()
	s.started, s.startAt = true, time.Now()
	s.mu.Unlock()
	s.limit.Reset(s.p.cfg.MaxDuration)
	s.push("", status("started"), nil)
}

func (s *session) process(m plugin.Message) {
	name, b, err := plugin.DecodeRequest(m.Body, &codes)
	if err != nil {
		s.pushError(m.Transaction, err)
		return
	}
	if m.JSEP != nil && m.JSEP.E2EE {
		s.pushError(m.Transaction, plugin.Errorf(ErrInvalidElement, "Media encryption unsupported by this plugin"))
		return
	}
	switch name {
	case "record":
		s.record(m)
	case "update":
		s.update(m)
	case "stop":
		s.stop(m.Transaction)
	default:
		s.pushError(m.Transaction, plugin.Errorf(ErrInvalidRequest, "Unknown request '%s'", b.Str("request")))
	}
}

// record starts a message: the recording is ready before the answer goes out.
func (s *session) record(m plugin.Message) {
	s.mu.Lock()
	busy := s.rec != nil
	started := s.started
	s.mu.Unlock()
	if busy {
		s.pushError(m.Transaction, plugin.Errorf(ErrAlreadyRecording, "Already recording"))
		return
	}
	var answer *plugin.JSEP
	if m.JSEP != nil && m.JSEP.SDP != "" {
		ctx, cancel := context.WithTimeout(s.ctx, negotiateTimeout)
		defer cancel()
		var err error
		if answer, err = s.negotiate(ctx, m.JSEP); err != nil {
			s.pushError(m.Transaction, err)
			return
		}
	}
	rec, err := s.p.newMessage(s.id, s.receiver())
	if err != nil {
		s.log.Warn("voicemail", "err", err)
		s.pushError(m.Transaction, plugin.Errorf(ErrIO, "Couldn't open output file"))
		return
	}
	s.mu.Lock()
	s.rec = rec
	s.mu.Unlock()
	st := "starting"
	if started {
		st = "started"
	}
	s.push(m.Transaction, status(st), answer)
}

// update renegotiates an ongoing message (an ICE restart).
func (s *session) update(m plugin.Message) {
	s.mu.Lock()
	ok := s.rec != nil && s.started
	s.mu.Unlock()
	if !ok {
		s.pushError(m.Transaction, plugin.Errorf(ErrInvalidState, "Invalid state (not recording)"))
		return
	}
	if m.JSEP == nil || m.JSEP.SDP == "" {
		s.push(m.Transaction, status("updating"), nil)
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, negotiateTimeout)
	defer cancel()
	answer, err := s.negotiate(ctx, m.JSEP)
	if err != nil {
		s.pushError(m.Transaction, err)
		return
	}
	s.push(m.Transaction, status("updating"), answer)
}

// stop ends the message: the file is made, "done" gives its URL, and the PeerConnection is closed
// (Janus ends the session's media).
func (s *session) stop(tx string) {
	s.limit.Stop()
	s.mu.Lock()
	s.started = false
	s.mu.Unlock()
	name, err := s.finish()
	switch {
	case err != nil:
		s.pushError(tx, plugin.Errorf(ErrIO, "Couldn't write the recording: %v", err))
	case name != "":
		ev := status("done")
		ev["recording"] = s.p.URL(name)
		s.push(tx, ev, nil)
	default:
		s.push(tx, status("done"), nil)
	}
	s.h.ClosePeer("voicemail done")
}

// mediaDown: the PeerConnection is gone; a message being recorded is kept, without an event.
func (s *session) mediaDown() {
	s.finish()
	s.mu.Lock()
	recv := s.recv
	s.started, s.peer, s.recv, s.mid = false, nil, nil, ""
	s.mu.Unlock()
	if recv != nil {
		recv.Close()
	}
}

// finish ends the recording, if any, and returns the name of the file it made.
func (s *session) finish() (string, error) {
	s.mu.Lock()
	rec := s.rec
	s.rec = nil
	s.mu.Unlock()
	if rec == nil {
		return "", nil
	}
	return rec.finish(s.log)
}
