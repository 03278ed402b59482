package audiobridge

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
	hint             = "I'm taking my time!"
)

// session is the audiobridge state of one handle: at most one room membership, and the media of
// its PeerConnection (or plain-RTP socket), which outlives a changeroom. Asynchronous requests run
// in order on the session's goroutine; synchronous ones on the caller's.
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger

	q *plugin.Queue // the asynchronous requests

	events plugin.Pusher // nothing is pushed after Detach

	mu     sync.Mutex // guards what follows
	member *member
	media  *sessionMedia
	// pluginOffered: the session's media was negotiated from the plugin's offer (generate_offer);
	// offered is that media until the client's answer comes.
	pluginOffered bool
	offered       *sessionMedia
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

// HandleMessage answers synchronous requests at once and queues asynchronous ones, whose result
// (or error) follows as an event: Janus decides which is which by the name alone.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	name, b, err := Decode(m.Body)
	if err != nil {
		return plugin.Sync(err.Data(Short))
	}
	if !Asynchronous(name) {
		return plugin.Sync(s.p.handleSync(s, name, b, m.Body))
	}
	if err := s.q.Enqueue(m); err != nil {
		return plugin.Sync(errorf(ErrUnknown, "%s", err).Data(Short))
	}
	return plugin.Async(hint)
}

// MediaReady: the participant's PeerConnection is up; the others learn it ("setup": true).
func (s *session) MediaReady() {
	s.mu.Lock()
	m := s.member
	s.mu.Unlock()
	if m != nil {
		m.room.setupChanged(m, true)
	}
}

// MediaClosed: the PeerConnection went away; as in Janus the participant leaves its room.
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	s.dropMedia()
}

// dropMedia ends the session's membership and media (the PeerConnection is gone).
func (s *session) dropMedia() {
	s.mu.Lock()
	m, md, offered := s.member, s.media, s.offered
	s.member, s.media, s.offered, s.pluginOffered = nil, nil, nil, false
	s.mu.Unlock()
	if m != nil {
		m.room.leave(m, leaveNotice)
	}
	for _, x := range []*sessionMedia{md, offered} {
		if x != nil {
			x.close()
		}
	}
}

// Detach stops the session; afterwards nothing touches the handle.
func (s *session) Detach() {
	s.q.Close()
	s.events.Detach()
	s.dropMedia()
	s.p.forget(s)
}

// push sends an event unless the handle is detached.
func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

// current returns the session's membership (nil when in no room).
func (s *session) current() *member {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.member
}

// currentOrNil is current for a session that may be nil (the admin API's requests have none).
func (s *session) currentOrNil() *member {
	if s == nil {
		return nil
	}
	return s.current()
}

// Query is the plugin_specific part of handle_info.
func (s *session) Query() any {
	q := map[string]any{}
	s.mu.Lock()
	m, md := s.member, s.media
	s.mu.Unlock()
	if m != nil {
		q["room"] = m.room.id
		q["id"] = m.id
		m.query(q)
	}
	if md != nil {
		md.query(q)
	}
	return q
}
