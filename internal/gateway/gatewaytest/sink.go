package gatewaytest

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/janus"
)

// Sink is an in-memory gateway sink that records what it is given. It implements gateway.Sink
// (structurally: this package does not import the gateway).
type Sink struct {
	Name string

	mu     sync.Mutex
	bound  map[uint64]bool
	events chan Event
}

// Event is one message delivered to a Sink, with its session.
type Event struct {
	Session uint64
	Msg     janus.Message
}

// NewSink returns a Sink that buffers up to 1024 events (more are dropped).
func NewSink() *Sink {
	return &Sink{Name: "janus.transport.test", bound: map[uint64]bool{}, events: make(chan Event, 1024)}
}

// Transport implements gateway.Sink.
func (s *Sink) Transport() string { return s.Name }

// Bind implements gateway.Sink.
func (s *Sink) Bind(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound[id] = true
}

// Unbind implements gateway.Sink.
func (s *Sink) Unbind(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bound, id)
}

// Deliver implements gateway.Sink.
func (s *Sink) Deliver(id uint64, m janus.Message) {
	select {
	case s.events <- Event{Session: id, Msg: m}:
	default:
	}
}

// Bound reports whether a session is currently bound to this sink.
func (s *Sink) Bound(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound[id]
}

// Next waits up to d for the next event; ok is false on timeout.
func (s *Sink) Next(d time.Duration) (ev Event, ok bool) {
	select {
	case ev = <-s.events:
		return ev, true
	case <-time.After(d):
		return ev, false
	}
}

// WaitFor returns the first event whose janus verb is kind, skipping others, waiting up to d.
func (s *Sink) WaitFor(kind string, d time.Duration) (Event, bool) {
	deadline := time.Now().Add(d)
	for {
		ev, ok := s.Next(time.Until(deadline))
		if !ok || ev.Msg.Janus == kind {
			return ev, ok
		}
	}
}
