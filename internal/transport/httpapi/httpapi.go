// Package httpapi is the Janus REST transport: POST base (create, info, ping), POST base/<s> and
// base/<s>/<h> for session and handle verbs, GET base/<s>?maxev=N long-polls for events, GET
// base/info, and CORS. It is a gateway.Sink for every session created or claimed over HTTP, keeping
// one bounded event queue per session that long-polls drain.
package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/transport"
)

// TransportName is the Janus package name of this transport.
const TransportName = "janus.transport.http"

// maxEvents caps maxev, so one long-poll reply stays a reasonable size.
const maxEvents = 1000

// Handler serves the REST transport. Create it with New.
type Handler struct {
	gw         *gateway.Gateway
	base       string
	longPoll   time.Duration
	cors       string
	maxBody    int64
	queueLimit int
	log        *slog.Logger

	mu      sync.Mutex
	queues  map[uint64]*queue
	retired []retiredQueue // closed queues kept for one last long-poll, oldest first

	dropped atomic.Uint64

	// proxy says which node holds a session and whether this one takes new sessions (nil: one
	// node); fwd forwards requests for the sessions other nodes hold (proxy.go).
	proxy cluster.Proxy
	fwd   *http.Transport

	closed  context.Context // cancelled by Close: releases every held long-poll
	closing <-chan struct{} // closed.Done()
	stop    context.CancelFunc
}

// retiredQueue is a closed queue that still holds events (a `timeout`, say) for a last long-poll.
type retiredQueue struct {
	id    uint64
	q     *queue
	until time.Time
}

// Option adjusts a Handler at construction.
type Option func(*Handler)

// New returns the REST transport for gw, configured from cfg.Transports.HTTP (base_path,
// long_poll_timeout, cors_origin, event_queue) and cfg.General.MaxMessageBytes, and lists it in
// gw's `info`.
func New(gw *gateway.Gateway, cfg *config.Config, opts ...Option) *Handler {
	hc := cfg.Transports.HTTP
	h := &Handler{
		gw:         gw,
		base:       hc.BasePath,
		longPoll:   hc.LongPollTimeout,
		cors:       hc.CORSOrigin,
		maxBody:    cfg.General.MaxMessageBytes,
		queueLimit: hc.EventQueue,
		log:        gw.Logger().With("transport", "http"),
		queues:     make(map[uint64]*queue),
	}
	h.closed, h.stop = context.WithCancel(context.Background())
	h.closing = h.closed.Done()
	if h.base == "" {
		h.base = "/janus"
	}
	for _, o := range opts {
		o(h)
	}
	gw.RegisterTransport(TransportName, plugin.Info{
		Name: "strata REST (HTTP) transport", Author: gateway.Author, VersionString: gateway.VersionString,
		Version: gateway.Version, Description: "Janus API over HTTP POST with long-poll GET for events",
	})
	return h
}

// DroppedEvents counts events dropped because a session's queue was full or gone.
func (h *Handler) DroppedEvents() uint64 { return h.dropped.Load() }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok, jerr := transport.ParsePath(h.base, r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	transport.CORS(w, r, h.cors)
	if jerr == nil && h.proxy != nil {
		if node, ok := h.locate(r, p); ok {
			h.forward(w, r, p, node)
			return
		}
	}
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusOK)
	case http.MethodGet:
		if jerr != nil {
			transport.WriteError(w, http.StatusNotFound, 0, jerr)
			return
		}
		h.get(w, r, p)
	case http.MethodPost:
		if jerr != nil {
			transport.WriteError(w, transport.PathErrorStatus(jerr), 0, jerr)
			return
		}
		if p.Info {
			transport.MethodNotAllowed(w, r, "GET, OPTIONS")
			return
		}
		h.post(w, r, p)
	default:
		transport.MethodNotAllowed(w, r, "GET, POST, OPTIONS")
	}
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request, p transport.Path) {
	switch {
	case p.Info:
		transport.WriteJSON(w, http.StatusOK, janus.Encode(h.gw.ServerInfo(transport.RandomTransaction())))
	case p.Handle != 0:
		// Events are per session: a handle's path points to its session's long-poll.
		target := h.base + "/" + strconv.FormatUint(p.Session, 10)
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusFound)
	case p.Session != 0:
		h.longPollEvents(w, r, p.Session)
	default:
		transport.MethodNotAllowed(w, r, "POST, OPTIONS")
	}
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request, p transport.Path) {
	body, ok := h.readBody(w, r, p)
	if !ok {
		return
	}
	m := h.gw.Handle(r.Context(), body, gateway.Origin{Sink: h, PathSession: p.Session, PathHandle: p.Handle, RemoteAddr: r.RemoteAddr})
	// Errors too (an unknown session: 458): Janus answers a POST with 200 and keeps 404 for the
	// long-poll GET of a session that is gone.
	transport.WriteJSON(w, h.postStatus(p, m), janus.Encode(m))
}

// readBody reads a POST's body, answering the client itself (false) when it cannot.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, p transport.Path) ([]byte, bool) {
	body, err := transport.ReadBody(w, r, h.maxBody)
	if err == transport.ErrTooLarge {
		transport.WriteError(w, http.StatusRequestEntityTooLarge, p.Session, transport.TooLarge(h.maxBody))
		return nil, false
	}
	if err != nil {
		transport.WriteError(w, http.StatusBadRequest, p.Session,
			janus.Errorf(janus.ErrTransportSpecific, "Cannot read request: %v", err))
		return nil, false
	}
	return body, true
}

// longPollEvents holds a GET until the session has events, the long-poll timeout passes (then it
// answers {"janus":"keepalive"}), or the client goes away. With maxev > 1 the reply is an array.
func (h *Handler) longPollEvents(w http.ResponseWriter, r *http.Request, sid uint64) {
	query := r.URL.Query()
	if !h.gw.Authorized(query.Get("apisecret"), query.Get("token")) {
		transport.WriteError(w, http.StatusForbidden, sid,
			janus.Errorf(janus.ErrUnauthorized, "Unauthorized request (wrong or missing secret/token)"))
		return
	}
	q := h.queue(sid)
	if q == nil || q.drained() {
		h.forget(sid, q)
		transport.WriteError(w, http.StatusNotFound, sid, janus.Errorf(janus.ErrSessionNotFound, "No such session %d", sid))
		return
	}
	maxev := parseMaxev(query.Get("maxev"))
	_ = h.gw.Touch(sid) // a long-poll counts as a keepalive
	timer := time.NewTimer(h.longPoll)
	defer timer.Stop()
	for {
		msgs, closed, wait := q.take(maxev)
		if len(msgs) > 0 {
			_ = h.gw.Touch(sid)
			transport.WriteJSON(w, http.StatusOK, encodeEvents(msgs, maxev))
			return
		}
		if closed {
			// The session ended while this poll was held (the client destroyed it, say). Janus
			// leaves such a poll to run to its timeout and answer keepalive; answering 404 at once
			// races the destroy reply, and janus.js counts the 404 as a lost connection.
			h.forget(sid, q)
			h.holdUntil(r, timer.C)
			transport.WriteJSON(w, http.StatusOK, janus.Encode(janus.Message{Janus: "keepalive"}))
			return
		}
		select {
		case <-h.closing:
			transport.WriteJSON(w, http.StatusOK, janus.Encode(janus.Message{Janus: "keepalive"}))
			return
		case <-wait:
		case <-timer.C:
			_ = h.gw.Touch(sid)
			transport.WriteJSON(w, http.StatusOK, janus.Encode(janus.Message{Janus: "keepalive"}))
			return
		case <-r.Context().Done():
			return
		}
	}
}

// holdUntil waits for the poll's timer, the client leaving, or the transport closing.
func (h *Handler) holdUntil(r *http.Request, timer <-chan time.Time) {
	select {
	case <-timer:
	case <-r.Context().Done():
	case <-h.closing:
	}
}

// Close releases every held long-poll, forwarded ones included (they answer keepalive), so the
// listener can shut down.
func (h *Handler) Close() {
	h.stop()
	if h.fwd != nil {
		h.fwd.CloseIdleConnections()
	}
}

func parseMaxev(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxEvents)
}

// encodeEvents is a single object for maxev 1 and an array otherwise, as janus.js expects.
func encodeEvents(msgs []janus.Message, maxev int) []byte {
	if maxev <= 1 {
		return janus.Encode(msgs[0])
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(janus.Encode(m))
	}
	b.WriteByte(']')
	return b.Bytes()
}
