package gateway

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/janus"
)

// session is one Janus session: a set of handles, owned by one Sink.
type session struct {
	id      uint64
	gw      *Gateway
	created time.Time
	addr    netip.Addr // counted against general.limits.sessions_per_address (zero: not counted)
	// last is the time of the last request or long-poll, in Unix nanoseconds.
	last atomic.Int64
	// timedOut: the watchdog expired it (its event handlers' event is "timeout", not "destroyed").
	timedOut atomic.Bool

	// mu guards everything below, and is held while calling the sink so that Bind, Deliver and
	// Unbind reach a sink in order.
	mu         sync.Mutex
	sink       Sink
	orphanedAt time.Time // non-zero while the session waits to be reclaimed
	handles    map[uint64]*handle
	attaching  int // handles whose plugin Attach is running
	destroyed  bool
}

// newSession makes an unowned session; create then claims it for the request's sink.
func newSession(g *Gateway, id uint64) *session {
	s := &session{id: id, gw: g, created: time.Now(), handles: make(map[uint64]*handle)}
	s.touch()
	return s
}

func (s *session) touch() { s.last.Store(time.Now().UnixNano()) }

func (s *session) lastActivity() time.Time { return time.Unix(0, s.last.Load()) }

// deliver sends a message to the session's sink, or drops it if there is none (the session is
// waiting to be reclaimed, or is gone).
func (s *session) deliver(m janus.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		s.gw.dropped.Add(1)
		return
	}
	s.sink.Deliver(s.id, m)
}

// claim moves the session to sink. It fails only if the session is already destroyed.
func (s *session) claim(sink Sink) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return false
	}
	s.orphanedAt = time.Time{}
	if s.sink == sink {
		return true
	}
	if s.sink != nil {
		s.sink.Unbind(s.id)
	}
	s.sink = sink
	if sink != nil {
		sink.Bind(s.id)
	}
	return true
}

// orphan detaches the session from sink (whose connection closed) so that it can be claimed later.
func (s *session) orphan(sink Sink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink != sink || s.destroyed {
		return
	}
	s.sink.Unbind(s.id)
	s.sink = nil
	s.orphanedAt = time.Now()
}

// ownedBy reports whether sink currently owns the session.
func (s *session) ownedBy(sink Sink) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sink == sink
}

func (s *session) transportName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		return ""
	}
	return s.sink.Transport()
}

func (s *session) orphanedSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orphanedAt
}

// addHandle registers a handle unless the session is being destroyed.
func (s *session) addHandle(h *handle) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return false
	}
	s.handles[h.id] = h
	return true
}

// reserveHandle takes a slot for a handle about to attach, within general.limits.handles_per_session
// (0: unlimited); endAttach gives the reservation back once the handle is added or has failed.
func (s *session) reserveHandle(limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > 0 && len(s.handles)+s.attaching >= limit {
		return false
	}
	s.attaching++
	return true
}

func (s *session) endAttach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attaching--
}

func (s *session) removeHandle(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.handles, id)
}

func (s *session) handleIDs() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]uint64, 0, len(s.handles))
	for id := range s.handles {
		ids = append(ids, id)
	}
	return ids
}

// markDestroyed flags the session and hands back its handles; it reports false if another
// goroutine got there first.
func (s *session) markDestroyed() ([]*handle, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return nil, false
	}
	s.destroyed = true
	hs := make([]*handle, 0, len(s.handles))
	for _, h := range s.handles {
		hs = append(hs, h)
	}
	s.handles = map[uint64]*handle{}
	return hs, true
}

func (s *session) unbind() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink != nil {
		s.sink.Unbind(s.id)
		s.sink = nil
	}
}

// destroySession removes a session, detaches all its handles (waiting for each plugin's Detach) and
// releases its sink. With notify, handles send `detached` events first. Safe to call twice.
func (g *Gateway) destroySession(s *session, notify bool) {
	g.mu.Lock()
	if g.sessions[s.id] == s {
		delete(g.sessions, s.id)
		g.limits.releaseSession(s.addr)
	}
	g.mu.Unlock()
	handles, first := s.markDestroyed()
	if !first {
		return
	}
	var wg sync.WaitGroup
	for _, h := range handles {
		wg.Add(1)
		h.detach("Session destroyed", notify, wg.Done)
	}
	wg.Wait()
	if !s.timedOut.Load() {
		g.emitSession(s, "destroyed", false)
	}
	s.unbind()
}
