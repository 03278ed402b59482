package wsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/transport"
)

const (
	// upstreamDialTimeout bounds opening a connection to another node (the client's reader waits
	// for it, so that its requests stay in order).
	upstreamDialTimeout = 3 * time.Second
	// upstreamReadLimit bounds one message from another node: its events can be far larger than
	// what clients may send (room lists, SDP), but not without limit.
	upstreamReadLimit = 16 << 20
)

// WithProxy makes the handler one node's Janus API in a cluster (docs/CLUSTER.md): a client's
// request for a session another node holds goes to that node over an upstream WebSocket (one per
// client connection and node, opened on the first such request, closed with the client), and
// everything that node sends back reaches the client through its connection. While the node takes
// no new sessions, new client connections are refused with HTTP 503, which makes janus.js try the
// next server in its list; open connections and connections from other nodes are served as ever.
// nil: one node.
func WithProxy(p cluster.Proxy) Option {
	return func(h *Handler) { h.proxy = p }
}

// refuse answers an upgrade with 503 while the node takes no new sessions (the cluster says so, or
// the admin API's accept_new_sessions is off); false when it takes them.
func (h *Handler) refuse(w http.ResponseWriter) bool {
	ok, why := h.proxy.Accepting()
	if ok && !h.gw.AcceptingNewSessions() {
		ok, why = false, "accept_new_sessions is off"
	}
	if ok {
		return false
	}
	transport.WriteError(w, http.StatusServiceUnavailable, 0,
		janus.Errorf(janus.ErrNotAcceptingSessions, "Not accepting new sessions: %s", why))
	return true
}

// upstream is one client connection's WebSocket to another node, for the sessions of that client
// that the node holds. The client's reader writes to it (in the client's order); its own reader
// hands what comes back to the client's outbox: the first message with a pending transaction is
// that request's reply (it fills the outbox slot the request took), everything else an event.
type upstream struct {
	c    *conn
	node cluster.NodeRecord
	ws   *websocket.Conn

	mu      sync.Mutex
	pending map[string]pendingTx // forwarded requests not answered yet, by transaction
	failed  bool
}

// pendingTx counts the requests forwarded with one transaction (a client may reuse one).
type pendingTx struct {
	session uint64
	n       int
}

var errUpstreamLost = errors.New("connection to the node lost")

// forward sends a request for a session another node holds to that node; false when the request
// is not forwarded (not addressed to a session, no transaction to match its reply, or the session
// is this node's or nobody's) and goes to this node's gateway. The request is forwarded as sent,
// so the other node answers even a malformed one with its own error.
func (c *conn) forward(data []byte) bool {
	req, _ := janus.Decode(data, janus.APIVerbs) // only the ids it could read matter here
	if req.SessionID == 0 || req.Transaction == "" {
		return false
	}
	node, ok := c.h.proxy.Locate(req.SessionID)
	if !ok {
		return false
	}
	u, err := c.upstream(node)
	if err == nil {
		err = u.send(req.SessionID, req.Transaction, data)
	}
	if err != nil {
		c.log.Warn("forwarding a request to the session's node failed", "session", req.SessionID, "node", node.ID, "url", node.WS, "err", err)
		c.reply(janus.ErrorReply(req.SessionID, req.Transaction, transport.ProxyFailed(req.SessionID, node, node.WS, err)))
	}
	return true
}

// upstream returns the connection to node, dialling it if there is none (or the last one failed).
func (c *conn) upstream(node cluster.NodeRecord) (*upstream, error) {
	c.upMu.Lock()
	u := c.upstreams[node.ID]
	c.upMu.Unlock()
	if u != nil {
		return u, nil
	}
	d := websocket.Dialer{
		NetDialContext:   (&net.Dialer{Timeout: upstreamDialTimeout}).DialContext,
		HandshakeTimeout: upstreamDialTimeout,
		Subprotocols:     []string{Subprotocol},
	}
	hdr := http.Header{transport.ProxiedHeader: {"1"}, "X-Forwarded-For": {c.forwardedFor}}
	ws, resp, err := d.DialContext(c.ctx, node.WS, hdr)
	if err != nil {
		if resp != nil {
			err = fmt.Errorf("%w (HTTP %s)", err, resp.Status)
		}
		return nil, err
	}
	ws.SetReadLimit(upstreamReadLimit)
	u = &upstream{c: c, node: node, ws: ws, pending: make(map[string]pendingTx)}
	c.upMu.Lock()
	if c.upClosed {
		c.upMu.Unlock()
		_ = ws.Close()
		return nil, errUpstreamLost
	}
	if c.upstreams == nil {
		c.upstreams = make(map[string]*upstream)
	}
	c.upstreams[node.ID] = u
	c.upMu.Unlock()
	go u.readLoop()
	return u, nil
}

// closeUpstreams closes the client's connections to other nodes (the client is gone); their
// readers then end.
func (c *conn) closeUpstreams() {
	c.upMu.Lock()
	c.upClosed = true
	ups := c.upstreams
	c.upstreams = nil
	c.upMu.Unlock()
	for _, u := range ups {
		_ = u.ws.Close()
	}
}

// send writes one request; an error means it was not sent and is the caller's to answer. A
// request that was written is answered by the node or, if the connection fails, by fail.
func (u *upstream) send(session uint64, tx string, data []byte) error {
	u.mu.Lock()
	if u.failed {
		u.mu.Unlock()
		return errUpstreamLost
	}
	p := u.pending[tx]
	u.pending[tx] = pendingTx{session: session, n: p.n + 1}
	u.mu.Unlock()
	_ = u.ws.SetWriteDeadline(time.Now().Add(u.c.h.sendTimeout))
	if err := u.ws.WriteMessage(websocket.TextMessage, data); err != nil {
		u.fail(err)
	}
	return nil
}

// readLoop passes everything the node sends to the client until the connection ends.
func (u *upstream) readLoop() {
	for {
		_, b, err := u.ws.ReadMessage()
		if err != nil {
			u.fail(err)
			return
		}
		if tx := transactionOf(b); tx != "" && u.answered(tx) {
			u.c.out.reply(b)
		} else {
			u.c.event(b)
		}
	}
}

// answered takes tx off the pending requests; false if none was pending (an event).
func (u *upstream) answered(tx string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	p, ok := u.pending[tx]
	if !ok {
		return false
	}
	if p.n--; p.n == 0 {
		delete(u.pending, tx)
	} else {
		u.pending[tx] = p
	}
	return true
}

// fail ends a connection that broke: it is forgotten (the client's next request for the node
// dials again), and every request still pending on it gets a Janus error naming the node.
func (u *upstream) fail(err error) {
	u.mu.Lock()
	if u.failed {
		u.mu.Unlock()
		return
	}
	u.failed = true
	pending := u.pending
	u.pending = nil
	u.mu.Unlock()
	c := u.c
	c.upMu.Lock()
	if c.upstreams[u.node.ID] == u {
		delete(c.upstreams, u.node.ID)
	}
	c.upMu.Unlock()
	_ = u.ws.Close()
	select {
	case <-c.gone:
		return // the client left: nobody to answer
	default:
	}
	c.log.Warn("connection to a session's node lost", "node", u.node.ID, "url", u.node.WS, "pending", len(pending), "err", err)
	for tx, p := range pending {
		m := janus.Encode(janus.ErrorReply(p.session, tx, transport.ProxyFailed(p.session, u.node, u.node.WS, err)))
		for range p.n {
			c.out.reply(m)
		}
	}
}

// transactionOf is the transaction of a message from another node ("" if it has none, or is not a
// JSON object: it goes to the client unchanged either way, as an event).
func transactionOf(b []byte) string {
	var m struct {
		Transaction string `json:"transaction"`
	}
	_ = json.Unmarshal(b, &m)
	return m.Transaction
}
