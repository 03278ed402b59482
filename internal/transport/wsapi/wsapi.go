// Package wsapi is the Janus WebSocket transport (subprotocol `janus-protocol`). Each connection is
// a gateway.Sink: replies and the events of the sessions it created or claimed are written by one
// writer goroutine per connection, in order. Closing the connection destroys its sessions (or
// orphans them for reclaim_session_timeout).
//
// Every request is answered: the reader stops reading while send_queue replies and events wait for
// the client (TCP flow control then slows the client down), and a client that does not read at all
// — nothing written for send_timeout, or events piling up far past send_queue — is disconnected
// with close code 1008 and a log line (see outbox).
package wsapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/cluster"
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
	pingInterval = 30 * time.Second
	// closeTimeout bounds the write of a close frame to a client that is being cut off.
	closeTimeout = time.Second
	// hardLimitFactor: messages up to this many times max_message_bytes are read and refused with an
	// error, keeping the connection; larger ones close it (the reader must stop somewhere).
	hardLimitFactor = 4
)

// CloseNotReading is the close code (1008, policy violation) sent to a client that does not take
// the messages sent to it: its outbox stayed full, or nothing could be written for send_timeout.
const CloseNotReading = websocket.ClosePolicyViolation

// Handler upgrades requests to Janus API WebSocket connections. Create it with New.
type Handler struct {
	gw          *gateway.Gateway
	maxBytes    int64
	sendQueue   int
	sendTimeout time.Duration
	upgrader    websocket.Upgrader
	log         *slog.Logger
	// proxy says which node holds a session and whether this one takes new sessions (nil: one
	// node; upstream.go).
	proxy cluster.Proxy

	mu    sync.Mutex
	conns map[*conn]struct{}
}

// Option adjusts a Handler at construction.
type Option func(*Handler)

// New returns the WebSocket transport for gw (message size limit from cfg.General.MaxMessageBytes,
// send_queue and send_timeout from cfg.Transports.WebSocket) and lists it in gw's `info`.
func New(gw *gateway.Gateway, cfg *config.Config, opts ...Option) *Handler {
	h := &Handler{
		gw:          gw,
		maxBytes:    cfg.General.MaxMessageBytes,
		sendQueue:   cfg.Transports.WebSocket.SendQueue,
		sendTimeout: cfg.Transports.WebSocket.SendTimeout,
		log:         gw.Logger().With("transport", "websocket"),
		conns:       make(map[*conn]struct{}),
	}
	h.upgrader = websocket.Upgrader{
		Subprotocols: []string{Subprotocol},
		// Janus accepts any origin; browsers on other origins are how the demos are used.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	gw.RegisterTransport(TransportName, plugin.Info{
		Name: "strata WebSocket transport", Author: gateway.Author, VersionString: gateway.VersionString,
		Version: gateway.Version, Description: "Janus API over WebSocket (janus-protocol)",
	})
	for _, o := range opts {
		o(h)
	}
	return h
}

// ServeHTTP implements http.Handler: it refuses handshakes without the janus-protocol subprotocol,
// as Janus does, then serves the connection until it closes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	forwards := h.proxy != nil && r.Header.Get(transport.ProxiedHeader) == ""
	if forwards && h.refuse(w) {
		return
	}
	ws := transport.Upgrade(w, r, &h.upgrader, Subprotocol)
	if ws == nil {
		return
	}
	c := h.newConn(ws)
	if forwards {
		c.forwards, c.forwardedFor = true, transport.ForwardedFor(r)
	}
	h.track(c, true)
	defer h.track(c, false)
	go c.writeLoop()
	c.readLoop()
	c.abort()
	if c.cutOffDone.Load() {
		lingerClose(c.tcp)
	}
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
		c.abort()
	}
}

// Conns is the number of open connections.
func (h *Handler) Conns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
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

// conn is one WebSocket connection and the gateway.Sink of its sessions. Its reader hands requests
// to the gateway, its writer sends replies and events from the outbox; either side ending, or the
// handler closing, aborts both.
type conn struct {
	h      *Handler
	ws     *websocket.Conn
	out    *outbox
	ctx    context.Context // cancelled on abort: requests still running see the client gone
	cancel context.CancelFunc
	log    *slog.Logger

	gone     chan struct{} // closed by abort
	goneOnce sync.Once
	cut      chan struct{} // closed when an event found the outbox overfull
	cutOnce  sync.Once
	// tcp is the socket whose unacknowledged bytes the writer bounds (nil: it cannot, sockroom.go).
	tcp *net.TCPConn
	// cutOffDone: the close frame of a cut-off went out, and the socket must linger (sockroom.go).
	cutOffDone atomic.Bool

	// forwards: requests for other nodes' sessions go to those nodes (false: one node, or a
	// connection another node opened, which is never forwarded again: the loop guard), with
	// forwardedFor as their X-Forwarded-For.
	forwards     bool
	forwardedFor string
	// upstreams are this client's connections to other nodes, by node id (upstream.go).
	upMu      sync.Mutex
	upstreams map[string]*upstream
	upClosed  bool
}

func (h *Handler) newConn(ws *websocket.Conn) *conn {
	c := &conn{h: h, ws: ws, out: newOutbox(h.sendQueue), gone: make(chan struct{}), cut: make(chan struct{}),
		log: h.log.With("remote", ws.RemoteAddr().String())}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if tc := tcpOf(ws.UnderlyingConn()); fixSendBuffer(tc) {
		c.tcp = tc
	}
	return c
}

// Transport implements gateway.Sink.
func (c *conn) Transport() string { return TransportName }

// Bind implements gateway.Sink; a connection needs no per-session state.
func (c *conn) Bind(uint64) {}

// Unbind implements gateway.Sink.
func (c *conn) Unbind(uint64) {}

// Deliver implements gateway.Sink. It never blocks: an event that finds the client far behind has
// the connection cut off (by the writer) rather than wait or vanish.
func (c *conn) Deliver(_ uint64, m janus.Message) { c.event(janus.Encode(m)) }

// event queues an event for the client, or has the client cut off if it is far behind.
func (c *conn) event(b []byte) {
	if !c.out.event(b) {
		c.cutOnce.Do(func() { close(c.cut) })
	}
}

// reply is the gateway's answer to a request that holds an outbox slot.
func (c *conn) reply(m janus.Message) { c.out.reply(janus.Encode(m)) }

// readLoop hands every message to the gateway in arrival order; a malformed message gets its error
// reply and the connection goes on. It reads a message only when the outbox has room for its reply.
func (c *conn) readLoop() {
	max := c.h.maxBytes
	c.ws.SetReadLimit(max * hardLimitFactor)
	origin := gateway.Origin{Sink: c, RemoteAddr: c.ws.RemoteAddr().String()}
	for c.out.acquire(c.gone) {
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
		if c.forwards && c.forward(data) {
			continue
		}
		c.h.gw.Submit(c.ctx, data, origin, c.reply)
	}
}

// writeLoop is the connection's only writer: replies, events, pings and the close frame.
func (c *conn) writeLoop() {
	defer c.abort()
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for c.writeNext(ping.C) {
	}
}

// writeNext writes the next message, or waits for one and pings an idle client; false ends the
// connection.
func (c *conn) writeNext(ping <-chan time.Time) bool {
	select {
	case <-c.cut:
		c.cutOff(fmt.Sprintf("not reading: %d messages waiting", c.out.waiting()))
		return false
	case <-c.gone:
		return false
	default:
	}
	if b, ok := c.out.next(); ok {
		if c.tcp != nil && !waitRoom(c.tcp, len(b), c.h.sendTimeout, c.cut, c.gone) {
			c.out.written()
			reason := fmt.Sprintf("took nothing for %s", c.h.sendTimeout)
			select {
			case <-c.cut:
				reason = fmt.Sprintf("not reading: %d messages waiting", c.out.waiting())
			default:
			}
			c.cutOff(reason)
			return false
		}
		// A write blocks only while the client takes nothing (its TCP window is closed), so the
		// deadline is how long a client may stop reading.
		_ = c.ws.SetWriteDeadline(time.Now().Add(c.h.sendTimeout))
		err := c.ws.WriteMessage(websocket.TextMessage, b)
		c.out.written()
		return c.wrote(err)
	}
	select {
	case <-c.out.more:
	case <-c.cut:
	case <-ping:
		return c.wrote(c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.h.sendTimeout)))
	case <-c.gone:
		return false
	}
	return true
}

// wrote reports whether the writer goes on after a write that returned err. A write that timed
// out is a client that took nothing for send_timeout: it is cut off.
func (c *conn) wrote(err error) bool {
	if err == nil {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.cutOff(fmt.Sprintf("took nothing for %s", c.h.sendTimeout))
	} else {
		c.log.Debug("WebSocket write failed", "err", err)
	}
	return false
}

// cutOff closes the connection of a client that does not read, with CloseNotReading and a log line.
// The writer leaves room for the close frame in the socket (sockroom.go; Linux), so a client that
// reads again finds it after its replies; the TCP connection closes either way.
func (c *conn) cutOff(reason string) {
	c.log.Warn("closing WebSocket: client not reading its messages", "reason", reason,
		"code", CloseNotReading, "send_queue", c.h.sendQueue, "send_timeout", c.h.sendTimeout)
	msg := websocket.FormatCloseMessage(CloseNotReading, reason)
	_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeTimeout))
	c.cutOffDone.Store(c.tcp != nil)
}

// abort ends the connection: the socket closes (ending the reader), the writer and a reader waiting
// for room stop, and what was waiting is discarded.
func (c *conn) abort() {
	c.goneOnce.Do(func() {
		close(c.gone)
		c.cancel()
		c.out.close()
		c.closeUpstreams()
		if c.cutOffDone.Load() {
			// The reader stops now; the socket lingers once it has (ServeHTTP).
			_ = c.tcp.SetReadDeadline(time.Now())
			return
		}
		_ = c.ws.Close()
	})
}
