package proxytest

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/transport"
	"github.com/strata-rtc/strata/internal/transport/httpapi"
	"github.com/strata-rtc/strata/internal/transport/wsapi"
)

// node is one gateway with its HTTP and WebSocket transports, listed in a Table.
type node struct {
	t    *testing.T
	rec  cluster.NodeRecord
	gw   *gateway.Gateway
	http *httptest.Server
	ws   *httptest.Server
	wsh  *wsapi.Handler
	seen *recorder // the requests that reached the node's HTTP transport
}

func startNode(t *testing.T, table *Table, id string, slot int) *node {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.LongPollTimeout = 300 * time.Millisecond
	cfg.Transports.Admin.AdminSecret = "s"
	proxy := table.From(slot)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gw := gateway.New(cfg, nil, []plugin.Plugin{gatewaytest.NewEcho()}, log.With("node", id), nil,
		gateway.WithNode(func() int { return slot }, proxy.Accepting))
	hh := httpapi.New(gw, cfg, httpapi.WithProxy(proxy))
	wh := wsapi.New(gw, cfg, wsapi.WithProxy(proxy))
	n := &node{t: t, gw: gw, wsh: wh, seen: &recorder{}}
	n.http = httptest.NewServer(n.seen.wrap(hh))
	n.ws = httptest.NewServer(wh)
	n.rec = cluster.NodeRecord{ID: id, Slot: slot, API: n.http.URL + "/janus", WS: "ws" + strings.TrimPrefix(n.ws.URL, "http"), State: cluster.Serving}
	table.Put(n.rec)
	t.Cleanup(func() { hh.Close(); wh.Close(); n.http.Close(); n.ws.Close(); gw.Close() })
	return n
}

// recorder keeps the headers of every request a handler gets.
type recorder struct {
	mu   sync.Mutex
	reqs []http.Header
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Header.Clone())
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

// forwarded counts the requests that came from another node, and returns the last one's headers.
func (r *recorder) forwarded() (int, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, last := 0, http.Header(nil)
	for _, h := range r.reqs {
		if h.Get(transport.ProxiedHeader) != "" {
			n++
			last = h
		}
	}
	return n, last
}

var httpClient = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// msg is a Janus message as a client reads it.
type msg map[string]any

func (m msg) janus() string { s, _ := m["janus"].(string); return s }

func (m msg) code() int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(json.Number)
	v, _ := c.Int64()
	return int(v)
}

func (m msg) reason() string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["reason"].(string)
	return s
}

func (m msg) id() uint64 {
	d, _ := m["data"].(map[string]any)
	f, _ := d["id"].(json.Number)
	v, _ := f.Int64()
	return uint64(v)
}

func decode(t *testing.T, b []byte) msg {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber() // ids use all 53 bits
	var m msg
	if err := d.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %q", b)
	}
	return m
}

// post sends body to the node's API at path and returns the status and the decoded reply.
func (n *node) post(path, body string, hdr ...string) (int, msg) {
	n.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, n.rec.API+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return n.do(req)
}

func (n *node) get(path string) (int, msg) {
	n.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, n.rec.API+path, nil)
	return n.do(req)
}

func (n *node) do(req *http.Request) (int, msg) {
	n.t.Helper()
	resp, err := httpClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, decode(n.t, b)
}

// create makes a session on the node over HTTP.
func (n *node) create() uint64 {
	n.t.Helper()
	status, m := n.post("", `{"janus":"create","transaction":"c"}`)
	if status != http.StatusOK || m.janus() != "success" || cluster.SessionSlot(m.id()) != n.rec.Slot {
		n.t.Fatalf("create on %s: %d %v", n.rec.ID, status, m)
	}
	return m.id()
}

// wsClient is a janus-protocol client of one node.
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func (n *node) dial() *wsClient {
	n.t.Helper()
	ws, _, err := dialWS(n.rec.WS)
	if err != nil {
		n.t.Fatalf("dial %s: %v", n.rec.ID, err)
	}
	n.t.Cleanup(func() { ws.Close() })
	return &wsClient{t: n.t, ws: ws}
}

func dialWS(url string) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{Subprotocols: []string{wsapi.Subprotocol}, HandshakeTimeout: 5 * time.Second}
	return d.Dial(url, nil)
}

func (c *wsClient) send(format string, args ...any) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, format, args...)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) read() msg {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return decode(c.t, b)
}

// do sends a request and returns its reply, the first message with its transaction.
func (c *wsClient) do(tx, format string, args ...any) msg {
	c.t.Helper()
	c.send(format, args...)
	for {
		if m := c.read(); m["transaction"] == tx {
			return m
		}
	}
}

// doAsync sends a request the plugin answers later and waits for its ack and its event, in
// whichever order they come: the plugin may push the event before the ack is written (as a Janus
// plugin's thread may), and the proxy keeps the order node 1 wrote them in.
func (c *wsClient) doAsync(tx, format string, args ...any) {
	c.t.Helper()
	c.send(format, args...)
	var acked, evented bool
	for !acked || !evented {
		m := c.read()
		if m["transaction"] != tx {
			continue
		}
		switch m.janus() {
		case "ack":
			acked = true
		case "event":
			evented = true
		default:
			c.t.Fatalf("reply to %s: %v, want an ack and an event", tx, m)
		}
	}
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
