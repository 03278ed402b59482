package events

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// WSPackage is the name Janus gives its WebSocket event handler, which this one mirrors.
const WSPackage = "janus.eventhandler.wsevh"

// WSSubprotocol is the subprotocol Janus's wsevh asks for unless configured otherwise.
const WSSubprotocol = "janus-event-handlers"

// WSHandler sends events as text messages to a WebSocket server it connects to, as Janus's wsevh:
// one JSON object per message, or with grouping a JSON array. It connects on the first event and
// reconnects after a failure with exponential backoff, resending the message that failed; events
// wait in the bounded queue meanwhile (Janus's events_cap_on_reconnect, but dropping the newest).
type WSHandler struct {
	*backend
	ws *wsSender
}

type wsSender struct {
	url         atomic.Pointer[string]
	subprotocol string
	timeout     time.Duration
	log         *slog.Logger

	mu        sync.Mutex
	conn      *websocket.Conn
	connected atomic.Bool
}

// NewWS starts a WebSocket handler. The URL must be ws:// or wss://.
func NewWS(o Options, log *slog.Logger) (*WSHandler, error) {
	if err := checkURL(o.URL, "ws", "wss"); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	if o.Subprotocol == "" {
		o.Subprotocol = WSSubprotocol
	}
	ws := &wsSender{subprotocol: o.Subprotocol, timeout: o.Timeout, log: log.With("event_handler", o.Name)}
	ws.url.Store(&o.URL)
	h := &WSHandler{backend: newBackend(o, ws, log), ws: ws}
	h.retryEver = true
	h.start()
	return h, nil
}

func (s *wsSender) send(ctx context.Context, payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		d := websocket.Dialer{HandshakeTimeout: s.timeout, Subprotocols: []string{s.subprotocol}}
		dctx, cancel := context.WithTimeout(ctx, s.timeout)
		conn, resp, err := d.DialContext(dctx, *s.url.Load(), nil)
		cancel()
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err != nil {
			return err
		}
		s.conn = conn
		s.connected.Store(true)
		s.log.Info("event handler connected", "url", *s.url.Load())
		go s.read(conn)
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	if err := s.conn.WriteMessage(websocket.TextMessage, payload); err != nil {
		s.dropLocked(s.conn)
		return err
	}
	return nil
}

// read consumes what the server sends (answering pings, seeing the close) until the connection ends,
// so that a server that goes away is noticed before the next event.
func (s *wsSender) read(conn *websocket.Conn) {
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			s.mu.Lock()
			s.dropLocked(conn)
			s.mu.Unlock()
			return
		}
	}
}

// dropLocked closes conn if it is still the current connection. Called with s.mu held.
func (s *wsSender) dropLocked(conn *websocket.Conn) {
	if s.conn != conn || conn == nil {
		return
	}
	conn.Close()
	s.conn = nil
	s.connected.Store(false)
}

func (s *wsSender) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		_ = s.conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "shutting down"), time.Now().Add(time.Second))
	}
	s.dropLocked(s.conn)
}

// Stats implements Handler.
func (h *WSHandler) Stats() Stats {
	st := h.stats()
	c := h.ws.connected.Load()
	st.Connected = &c
	return st
}

// Query implements Handler: "tweak" (events, grouping, and backend, which reconnects to the new
// address; max_retransmissions and retransmissions_backoff as for HTTP, though a WebSocket handler
// never gives events up) and "stats".
func (h *WSHandler) Query(req json.RawMessage) any {
	return query(req, h.backend, h.Stats, func(t tweak) *queryError {
		if t.user != nil || t.password != nil {
			return qerr(ErrInvalidElement, "Invalid element (backend_user and backend_pwd are for HTTP backends)")
		}
		if t.backend == nil {
			return nil
		}
		if err := checkURL(*t.backend, "ws", "wss"); err != nil {
			return qerr(ErrInvalidElement, "Invalid WebSocket URI '%s'", *t.backend)
		}
		u := *t.backend
		h.ws.url.Store(&u)
		h.ws.mu.Lock()
		h.ws.dropLocked(h.ws.conn)
		h.ws.mu.Unlock()
		return nil
	})
}
