// Package janusclient is a small client for the Janus API, over HTTP (REST plus long-poll) or
// WebSocket (subprotocol janus-protocol), with one API for both: Dial, Create a session, Attach a
// plugin, send messages (waiting for the asynchronous event when the plugin acks), trickle, hang up,
// detach, destroy. Unsolicited events (webrtcup, media, slowlink, hangup, detached, timeout, plugin
// events) arrive on the Events channels of the session and handle they concern. Core errors come
// back as *Error, plugin errors as *PluginError; Code extracts the Janus code of either.
package janusclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrClosed is returned once the client is closed or its WebSocket is gone.
var ErrClosed = errors.New("janusclient: closed")

// eventBuffer is the size of each Events channel. When a consumer does not keep up, further events
// are dropped (and counted in Dropped) rather than stalling every other session.
const eventBuffer = 256

// Option configures a Client.
type Option func(*options)

type options struct {
	httpClient *http.Client
	apiSecret  string
	token      string
	keepalive  time.Duration
	maxEvents  int
}

// WithHTTPClient sets the HTTP client (HTTP transport only).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithAPISecret adds "apisecret" to every request.
func WithAPISecret(s string) Option { return func(o *options) { o.apiSecret = s } }

// WithToken adds "token" to every request.
func WithToken(t string) Option { return func(o *options) { o.token = t } }

// WithKeepalive sets the session keepalive interval (default 25 s, as janus.js); 0 disables it.
func WithKeepalive(d time.Duration) Option { return func(o *options) { o.keepalive = d } }

// WithMaxEvents sets maxev for HTTP long-polls (default 10, as janus.js).
func WithMaxEvents(n int) Option { return func(o *options) { o.maxEvents = n } }

// transport moves messages. send returns the synchronous reply when the transport has one (HTTP);
// otherwise (WebSocket) replies arrive through the dispatch function given at dial time.
type transport interface {
	send(ctx context.Context, sessionID, handleID uint64, msg map[string]any) (*Event, error)
	// startSession begins receiving a session's events (the HTTP long-poll).
	startSession(sessionID uint64)
	stopSession(sessionID uint64)
	close() error
}

// Client is a connection to one Janus API endpoint.
type Client struct {
	t    transport
	opts options

	mu       sync.Mutex
	pending  map[string]chan *Event
	sessions map[uint64]*Session
	closed   chan struct{}
	once     sync.Once
	dropped  int
}

// Dial connects to a Janus API: http(s)://host:port/janus uses REST with long-poll, ws(s)://host:port
// uses WebSocket. Nothing is created on the server until Create.
func Dial(ctx context.Context, url string, opts ...Option) (*Client, error) {
	o := options{keepalive: 25 * time.Second, maxEvents: 10, httpClient: &http.Client{Timeout: 90 * time.Second}}
	for _, opt := range opts {
		opt(&o)
	}
	c := &Client{opts: o, pending: map[string]chan *Event{}, sessions: map[uint64]*Session{}, closed: make(chan struct{})}
	switch {
	case strings.HasPrefix(url, "http://"), strings.HasPrefix(url, "https://"):
		c.t = newHTTPTransport(url, o, c.dispatch)
	case strings.HasPrefix(url, "ws://"), strings.HasPrefix(url, "wss://"):
		t, err := dialWS(ctx, url, c.dispatch, c.lost)
		if err != nil {
			return nil, err
		}
		c.t = t
	default:
		return nil, fmt.Errorf("janusclient: %q is neither http(s):// nor ws(s)://", url)
	}
	return c, nil
}

// Close stops every session's background work and closes the connection. It does not destroy
// sessions on the server (call Session.Destroy first for that).
func (c *Client) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.t.close()
		c.mu.Lock()
		sessions := c.sessions
		c.sessions = map[uint64]*Session{}
		c.mu.Unlock()
		for _, s := range sessions {
			s.shutdown()
		}
	})
	return err
}

// lost is called by the WebSocket transport when the socket ends.
func (c *Client) lost() { _ = c.Close() }

// Dropped is the number of events dropped because an Events channel was full.
func (c *Client) Dropped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// Info returns the server_info reply.
func (c *Client) Info(ctx context.Context) (*Event, error) {
	return c.request(ctx, 0, 0, map[string]any{"janus": "info"}, false)
}

// Ping checks the server answers (pong).
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.request(ctx, 0, 0, map[string]any{"janus": "ping"}, false)
	return err
}

// Create creates a session and starts its event delivery (and keepalives).
func (c *Client) Create(ctx context.Context) (*Session, error) {
	ev, err := c.request(ctx, 0, 0, map[string]any{"janus": "create"}, false)
	if err != nil {
		return nil, err
	}
	id, err := dataID(ev)
	if err != nil {
		return nil, err
	}
	s := newSession(c, id)
	c.mu.Lock()
	c.sessions[id] = s
	c.mu.Unlock()
	c.t.startSession(id)
	go s.keepalive()
	return s, nil
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.sessions, id)
	c.mu.Unlock()
	c.t.stopSession(id)
}

// request sends one request and waits for its answer. With wantEvent (plugin messages) an `ack` is
// not the answer: the event with the same transaction is.
func (c *Client) request(ctx context.Context, sessionID, handleID uint64, msg map[string]any, wantEvent bool) (*Event, error) {
	tx := newTransaction()
	msg["transaction"] = tx
	if c.opts.apiSecret != "" {
		msg["apisecret"] = c.opts.apiSecret
	}
	if c.opts.token != "" {
		msg["token"] = c.opts.token
	}
	ch := make(chan *Event, 4)
	c.mu.Lock()
	c.pending[tx] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, tx)
		c.mu.Unlock()
	}()
	reply, err := c.t.send(ctx, sessionID, handleID, msg)
	if err != nil {
		return nil, err
	}
	if reply != nil {
		ch <- reply
	}
	for {
		select {
		case ev := <-ch:
			switch {
			case ev.Janus == "error":
				if ev.Error == nil {
					ev.Error = &Error{Code: 490, Reason: "error without details"}
				}
				return ev, ev.Error
			case ev.Janus == "ack" && wantEvent:
				continue // the event follows (or came already: it would have been read first)
			}
			if pe := ev.PluginError(); pe != nil {
				return ev, pe
			}
			return ev, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, ErrClosed
		}
	}
}

// dispatch routes an incoming message: to the request waiting for its transaction, else to the
// Events channel of its handle (by sender) or session.
func (c *Client) dispatch(ev *Event) {
	c.mu.Lock()
	if ev.Transaction != "" {
		if ch, ok := c.pending[ev.Transaction]; ok {
			select {
			case ch <- ev:
			default:
			}
			c.mu.Unlock()
			return
		}
	}
	s := c.sessions[ev.SessionID]
	c.mu.Unlock()
	if s == nil || ev.Janus == "ack" || ev.Janus == "keepalive" {
		return
	}
	if !s.deliver(ev) {
		c.mu.Lock()
		c.dropped++
		c.mu.Unlock()
	}
}

func newTransaction() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// dataID reads data.id of a create or attach reply.
func dataID(ev *Event) (uint64, error) {
	var d struct {
		ID uint64 `json:"id"`
	}
	if err := jsonUnmarshal(ev.Data, &d); err != nil || d.ID == 0 {
		return 0, fmt.Errorf("janusclient: %q reply without data.id", ev.Janus)
	}
	return d.ID, nil
}
