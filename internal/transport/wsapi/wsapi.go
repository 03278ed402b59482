// Package wsapi is the Janus WebSocket transport (subprotocol `janus-protocol`). Each connection is
// a gateway.Sink: replies and the events of the sessions it created or claimed are written by one
// writer goroutine per connection, in order. Closing the connection destroys its sessions (or
// orphans them for reclaim_session_timeout).
package wsapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/transport"
)

// TransportName is the Janus package name of this transport.
const TransportName = "janus.transport.websockets"

// Subprotocol is the WebSocket subprotocol clients must request.
const Subprotocol = "janus-protocol"

const (
	// DefaultSendQueue is how many outgoing messages a connection buffers before dropping the oldest.
	DefaultSendQueue = 1024
	writeTimeout     = 10 * time.Second
	pingInterval     = 30 * time.Second
	// hardLimitFactor: messages up to this many times max_message_bytes are read and refused with an
	// error, keeping the connection; larger ones close it (the reader must stop somewhere).
	hardLimitFactor = 4
)

// Handler upgrades requests to Janus API WebSocket connections. Create it with New.
type Handler struct {
	gw        *gateway.Gateway
	maxBytes  int64
	sendQueue int
	upgrader  websocket.Upgrader
	log       *slog.Logger

	mu    sync.Mutex
	conns map[*conn]struct{}
}

// Option adjusts a Handler.
type Option func(*Handler)

// WithSendQueue sets how many outgoing messages a connection buffers.
func WithSendQueue(n int) Option {
	return func(h *Handler) {
		if n > 0 {
			h.sendQueue = n
		}
	}
}

// New returns the WebSocket transport for gw (message size limit from cfg.General.MaxMessageBytes)
// and lists it in gw's `info`.
func New(gw *gateway.Gateway, cfg *config.Config, opts ...Option) *Handler {
	h := &Handler{
		gw:        gw,
		maxBytes:  cfg.General.MaxMessageBytes,
		sendQueue: DefaultSendQueue,
		log:       gw.Logger().With("transport", "websocket"),
		conns:     make(map[*conn]struct{}),
	}
	h.upgrader = websocket.Upgrader{
		Subprotocols: []string{Subprotocol},
		// Janus accepts any origin; browsers on other origins are how the demos are used.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	for _, o := range opts {
		o(h)
	}
	gw.RegisterTransport(TransportName, plugin.Info{
		Name: "strata WebSocket transport", Author: gateway.Author, VersionString: gateway.VersionString,
		Version: gateway.Version, Description: "Janus API over WebSocket (janus-protocol)",
	})
	return h
}

// ServeHTTP implements http.Handler: it refuses handshakes without the janus-protocol subprotocol,
// as Janus does, then serves the connection until it closes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "expected a WebSocket upgrade with subprotocol "+Subprotocol, http.StatusBadRequest)
		return
	}
	if !slices.Contains(websocket.Subprotocols(r), Subprotocol) {
		http.Error(w, "subprotocol "+Subprotocol+" required", http.StatusBadRequest)
		return
	}
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	c := h.newConn(ws)
	h.track(c, true)
	defer h.track(c, false)
	go c.writeLoop()
	c.readLoop()
	c.shutdown()
	h.gw.SinkClosed(c)
}

// Close closes every open connection (their sessions are then handled as on any close).
func (h *Handler) Close() {
	h.mu.Lock()
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.Close()
	}
}

func (h *Handler) track(c *conn, open bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if open {
		h.conns[c] = struct{}{}
	} else {
		delete(h.conns, c)
	}
}

// conn is one WebSocket connection and the gateway.Sink of its sessions.
type conn struct {
	h      *Handler
	ws     *websocket.Conn
	out    chan []byte
	done   chan struct{}
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger

	dropped atomic.Uint64
}

func (h *Handler) newConn(ws *websocket.Conn) *conn {
	c := &conn{h: h, ws: ws, out: make(chan []byte, h.sendQueue), done: make(chan struct{}),
		log: h.log.With("remote", ws.RemoteAddr().String())}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// Transport implements gateway.Sink.
func (c *conn) Transport() string { return TransportName }

// Bind implements gateway.Sink; a connection needs no per-session state.
func (c *conn) Bind(uint64) {}

// Unbind implements gateway.Sink.
func (c *conn) Unbind(uint64) {}

// Deliver implements gateway.Sink.
func (c *conn) Deliver(_ uint64, m janus.Message) { c.send(janus.Encode(m)) }

// send queues a message for the writer without blocking: when the queue is full (a client that
// stopped reading) the oldest message goes.
func (c *conn) send(b []byte) {
	select {
	case <-c.done:
		return
	default:
	}
	for {
		select {
		case c.out <- b:
			return
		default:
		}
		select {
		case <-c.out:
			if n := c.dropped.Add(1); n&(n-1) == 0 {
				c.log.Warn("WebSocket send queue full, dropping oldest messages", "dropped", n)
			}
		default:
		}
	}
}

func (c *conn) reply(m janus.Message) { c.send(janus.Encode(m)) }

// readLoop hands every message to the gateway in arrival order; a malformed message gets its error
// reply and the connection goes on.
func (c *conn) readLoop() {
	max := c.h.maxBytes
	c.ws.SetReadLimit(max * hardLimitFactor)
	origin := gateway.Origin{Sink: c, RemoteAddr: c.ws.RemoteAddr().String()}
	for {
		_, r, err := c.ws.NextReader()
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, max+1))
		if err != nil {
			return
		}
		if int64(len(data)) > max {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return
			}
			c.reply(janus.ErrorReply(0, "", transport.TooLarge(max)))
			continue
		}
		c.h.gw.Submit(c.ctx, data, origin, c.reply)
	}
}

// writeLoop is the connection's only writer: replies, events and pings.
func (c *conn) writeLoop() {
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for {
		select {
		case b := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
			if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
				c.log.Debug("WebSocket write failed", "err", err)
				_ = c.ws.Close() // ends readLoop
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)); err != nil {
				_ = c.ws.Close()
				return
			}
		case <-c.done:
			return
		}
	}
}

// shutdown stops the writer and closes the socket.
func (c *conn) shutdown() {
	c.once.Do(func() {
		close(c.done)
		c.cancel()
		_ = c.ws.Close()
	})
}
