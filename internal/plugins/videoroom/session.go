package videoroom

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
	// negotiateTimeout bounds one offer/answer (half-trickle waits for candidate gathering).
	negotiateTimeout = 30 * time.Second
)

// asyncRequests are answered with `ack`, then an event (Janus's videoroom split).
var asyncRequests = map[string]bool{
	"join": true, "joinandconfigure": true, "configure": true, "publish": true, "unpublish": true,
	"start": true, "pause": true, "switch": true, "subscribe": true, "unsubscribe": true, "update": true, "leave": true,
}

// session is the videoroom state of one handle: nothing yet, a publisher (a room participant) or a
// subscriber. Asynchronous requests run in order on the session's goroutine.
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger

	queue  chan plugin.Message
	jobs   chan func()
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	events plugin.Pusher // nothing is pushed after Detach

	mu  sync.Mutex
	pub *publisher
	sub *subscriber
}

func newSession(p *Plugin, h plugin.Handle) *session {
	ctx, cancel := context.WithCancel(context.Background())
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	return &session{p: p, h: h, log: log.With("plugin", short), queue: make(chan plugin.Message, queueSize),
		jobs: make(chan func(), queueSize), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// HandleMessage answers synchronous requests at once and queues asynchronous ones.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	b, rerr := parseBody(m.Body)
	if rerr != nil {
		return plugin.Sync(rerr.data())
	}
	name, _, rerr := b.str("request", true)
	if rerr != nil {
		return plugin.Sync(rerr.data())
	}
	if _, ok := syncRequests[name]; ok {
		data, rerr := s.p.syncRequest(name, b)
		if rerr != nil {
			return plugin.Sync(rerr.data())
		}
		return plugin.Sync(data)
	}
	if !asyncRequests[name] {
		return plugin.Sync(errorf(ErrInvalidRequest, "Unknown request '%s'", name).data())
	}
	select {
	case <-s.ctx.Done():
		return plugin.Sync(errorf(ErrUnknown, "Handle detached").data())
	default:
	}
	select {
	case s.queue <- m:
		return plugin.Async("")
	default:
		return plugin.Sync(errorf(ErrUnknown, "Too many pending requests").data())
	}
}

func (s *session) work() {
	defer close(s.done)
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-s.queue:
			s.process(m)
		case job := <-s.jobs:
			job()
		}
	}
}

// run schedules work on the session's goroutine, in order with its requests (e.g. renegotiating a
// subscription when a publisher leaves). It never blocks: with a full queue the job runs on its
// own goroutine.
func (s *session) run(job func()) {
	select {
	case <-s.ctx.Done():
	case s.jobs <- job:
	default:
		go job()
	}
}

func (s *session) process(m plugin.Message) {
	b, _ := parseBody(m.Body) // validated by HandleMessage
	name, _, _ := b.str("request", false)
	ctx, cancel := context.WithTimeout(s.ctx, negotiateTimeout)
	defer cancel()
	if err := s.dispatch(ctx, m.Transaction, name, b, m.JSEP); err != nil {
		s.push(m.Transaction, err.data(), nil)
	}
}

// dispatch runs one asynchronous request; the handler pushes its own success event.
func (s *session) dispatch(ctx context.Context, tx, name string, b body, jsep *plugin.JSEP) *requestError {
	s.mu.Lock()
	pub, sub := s.pub, s.sub
	s.mu.Unlock()
	switch {
	case name == "join" || name == "joinandconfigure":
		if pub != nil || sub != nil {
			return errorf(ErrAlreadyJoined, "Already in as a %s on this handle", map[bool]string{true: "publisher", false: "subscriber"}[pub != nil])
		}
		ptype, _, err := b.str("ptype", true)
		if err != nil {
			return err
		}
		switch ptype {
		case "publisher":
			return s.joinPublisher(ctx, tx, b, jsep, name == "joinandconfigure")
		case "subscriber", "listener":
			return s.joinSubscriber(ctx, tx, b, jsep)
		}
		return errorf(ErrInvalidElement, "Invalid element (ptype)")
	case pub != nil:
		return s.publisherRequest(ctx, tx, name, pub, b, jsep)
	case sub != nil:
		return s.subscriberRequest(ctx, tx, name, sub, b, jsep)
	}
	return errorf(ErrJoinFirst, "Join first")
}

func (s *session) publisherRequest(ctx context.Context, tx, name string, pub *publisher, b body, jsep *plugin.JSEP) *requestError {
	switch name {
	case "configure", "publish":
		answer, err := pub.configure(ctx, b, jsep, name == "publish")
		if err != nil {
			return err
		}
		s.push(tx, pub.configuredEvent(), answer)
	case "unpublish":
		if err := pub.unpublish(); err != nil {
			return err
		}
		s.push(tx, map[string]any{short: "event", "room": pub.room.id, "unpublished": "ok"}, nil)
	case "leave":
		s.push(tx, map[string]any{short: "event", "room": pub.room.id, "leaving": "ok"}, nil)
		s.h.ClosePeer("leave")
		pub.leave()
		s.setPublisher(nil)
	default:
		return errorf(ErrInvalidRequest, "Unknown request '%s' for a publisher", name)
	}
	return nil
}

func (s *session) setPublisher(p *publisher) {
	s.mu.Lock()
	s.pub = p
	s.mu.Unlock()
}

func (s *session) setSubscriber(sub *subscriber) {
	s.mu.Lock()
	s.sub = sub
	s.mu.Unlock()
}

func (s *session) roles() (*publisher, *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pub, s.sub
}

// MediaReady: a publisher becomes active; a subscriber's streams start flowing.
func (s *session) MediaReady() {
	pub, sub := s.roles()
	if pub != nil {
		pub.mediaUp()
	}
	if sub != nil {
		sub.mediaUp()
	}
}

// MediaClosed ends a publication or a subscription's media.
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	pub, sub := s.roles()
	if pub != nil {
		pub.stopMedia()
	}
	if sub != nil {
		sub.mediaClosed()
	}
}

// Detach leaves the room and stops everything; afterwards nothing touches the handle.
func (s *session) Detach() {
	s.cancel()
	<-s.done
	pub, sub := s.roles()
	if pub != nil {
		pub.leave()
	}
	if sub != nil {
		sub.close()
	}
	s.events.Detach()
	s.p.forget(s)
}

// kicked removes a participant a moderator kicked.
func (s *session) kicked() {
	pub, _ := s.roles()
	if pub == nil {
		return
	}
	s.h.ClosePeer("kicked")
	pub.leave()
	s.setPublisher(nil)
}

// roomDestroyed ends whatever the session did in a destroyed room.
func (s *session) roomDestroyed() {
	pub, sub := s.roles()
	if pub != nil {
		s.h.ClosePeer("room destroyed")
		pub.stopMedia()
		s.setPublisher(nil)
	}
	if sub != nil {
		sub.close()
		s.h.ClosePeer("room destroyed")
		s.setSubscriber(nil)
	}
}

// push sends an event unless the handle is detached.
func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

// Query is the plugin_specific part of handle_info.
func (s *session) Query() any {
	pub, sub := s.roles()
	switch {
	case pub != nil:
		q := map[string]any{"type": "publisher", "room": pub.room.id, "id": pub.id, "private_id": pub.privateID}
		var streams []map[string]any
		for _, st := range pub.streamList() {
			e := st.describe()
			rs := st.recv.Stats()
			e["packets"], e["bytes"], e["malformed"] = rs.Packets, rs.Bytes, rs.MalformedRTP+rs.MalformedPayload
			// sinks: subscribers' down-tracks and RTP forwarders.
			e["keyframe_requests"], e["sinks"] = rs.KeyframeRequests, rs.Sinks
			if name := pub.recordingOf(st); name != "" {
				e["recording"] = name // as Janus: the stream's .mjr file
			}
			streams = append(streams, e)
		}
		if d := pub.dataStream(); d != nil {
			e, ds := d.describe(), d.recv.Stats()
			e["messages"], e["bytes"], e["sinks"] = ds.Messages, ds.Bytes, ds.Sinks
			streams = append(streams, e)
		}
		q["streams"] = streams
		return q
	case sub != nil:
		return sub.query()
	}
	return map[string]any{"type": "none"}
}

// dropFeed removes a publisher's streams from every subscription.
func (p *Plugin) dropFeed(pub *publisher) {
	for _, s := range p.sessions.All() {
		if _, sub := s.roles(); sub != nil && sub.room == pub.room {
			s.run(func() { sub.feedGone(pub) })
		}
	}
}

// dropSubscribersOf ends every subscription in a destroyed room.
func (p *Plugin) dropSubscribersOf(r *room) {
	for _, s := range p.sessions.All() {
		if _, sub := s.roles(); sub != nil && sub.room == r {
			s.push("", map[string]any{short: "destroyed", "room": r.id}, nil)
			s.roomDestroyed()
		}
	}
}
