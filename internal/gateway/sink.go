package gateway

import "github.com/strata-rtc/strata/internal/janus"

// Sink is the transport side of a session: where the session's events go. A session is owned by
// exactly one sink at a time (or by none while it waits to be reclaimed). The HTTP transport is one
// sink for all its sessions, with a long-poll queue per session; each WebSocket connection is a sink.
//
// The gateway calls Bind, Deliver and Unbind for one session in order and never concurrently, from
// whatever goroutine produced the event (a request, a plugin, Pion). A sink must therefore never block
// and never call back into the Gateway from these methods.
type Sink interface {
	// Transport is the transport's Janus package name ("janus.transport.http"), shown by the admin API.
	Transport() string
	// Bind announces that the session's events are sent to this sink from now on (create, claim).
	Bind(sessionID uint64)
	// Deliver hands over one message for a bound session. A sink that cannot keep up must not
	// block: it drops and tells the client (HTTP's events_dropped notice) or disconnects a client
	// that does not read (WebSocket), never losing a message without a trace.
	Deliver(sessionID uint64, m janus.Message)
	// Unbind announces that the session left this sink: destroyed, timed out, or claimed elsewhere.
	// Messages delivered before Unbind should still reach the client if they can (a `timeout` event
	// is delivered right before Unbind).
	Unbind(sessionID uint64)
}

// Origin describes where a request came from.
type Origin struct {
	// Sink receives the events of sessions this request creates or claims.
	Sink Sink
	// PathSession and PathHandle are ids taken from the request's URL (HTTP); 0 when absent. They win
	// over the body, and a body that disagrees gets 457.
	PathSession uint64
	PathHandle  uint64
	// RemoteAddr is the client's address as the transport sees it ("ip:port"), for the
	// per-address session limit; empty when unknown.
	RemoteAddr string
	// Trusted requests skip api_secret and token checks: an in-process transport that has already
	// authorised its client by its own rules (WHIP's bearer token, docs/WHIP.md).
	Trusted bool
}
