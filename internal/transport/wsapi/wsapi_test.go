package wsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/syncbuf"
)

type env struct {
	t    *testing.T
	gw   *gateway.Gateway
	h    *Handler
	echo *gatewaytest.Echo
	url  string
	logs *syncbuf.Buffer
}

func newEnv(t *testing.T, mutate func(*config.Config)) *env {
	t.Helper()
	cfg := config.Default()
	if mutate != nil {
		mutate(cfg)
	}
	echo := gatewaytest.NewEcho()
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	gw := gateway.New(cfg, nil, []plugin.Plugin{echo}, log, nil, gateway.WithWatchdogInterval(50*time.Millisecond))
	h := New(gw, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { h.Close(); srv.Close(); gw.Close() })
	return &env{t: t, gw: gw, h: h, echo: echo, url: "ws" + strings.TrimPrefix(srv.URL, "http"), logs: logs}
}

// client is a test WebSocket client speaking janus-protocol.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func (e *env) dial() *client {
	e.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial(e.url, nil)
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	if resp.Header.Get("Sec-WebSocket-Protocol") != Subprotocol {
		e.t.Fatalf("server chose subprotocol %q", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	c := &client{t: e.t, ws: ws}
	e.t.Cleanup(func() { ws.Close() })
	return c
}

func (c *client) send(format string, args ...any) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf(format, args...))); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() map[string]any {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("not a JSON object: %s", data)
	}
	return m
}

// call sends a request and returns the next message, which must be its reply.
func (c *client) call(format string, args ...any) map[string]any {
	c.t.Helper()
	c.send(format, args...)
	return c.recv()
}

func dataID(t *testing.T, m map[string]any) uint64 {
	t.Helper()
	d, ok := m["data"].(map[string]any)
	if m["janus"] != "success" || !ok {
		t.Fatalf("expected success with data.id: %v", m)
	}
	return uint64(d["id"].(float64))
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func (c *client) session() (sid, hid uint64) {
	c.t.Helper()
	sid = dataID(c.t, c.call(`{"janus":"create","transaction":"c"}`))
	hid = dataID(c.t, c.call(`{"janus":"attach","transaction":"a","session_id":%d,"plugin":"%s","opaque_id":"ws-1"}`, sid, gatewaytest.EchoPackage))
	return sid, hid
}

func TestHandshakeNeedsSubprotocol(t *testing.T) {
	e := newEnv(t, nil)
	for _, protos := range [][]string{nil, {"chat"}} {
		d := websocket.Dialer{Subprotocols: protos, HandshakeTimeout: 5 * time.Second}
		ws, resp, err := d.Dial(e.url, nil)
		if err == nil {
			ws.Close()
			t.Fatalf("handshake with %v accepted", protos)
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("handshake with %v: %v", protos, resp)
		}
	}
}

func TestWebSocketCallFlow(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	sid, hid := c.session()
	if m := c.call(`{"janus":"keepalive","transaction":"k","session_id":%d}`, sid); m["janus"] != "ack" {
		t.Fatalf("keepalive: %v", m)
	}
	// ack and event may come in either order (Janus does that too); both must come.
	c.send(`{"janus":"message","transaction":"m1","session_id":%d,"handle_id":%d,"body":{"audio":true}}`, sid, hid)
	got := map[string]map[string]any{}
	for len(got) < 2 {
		m := c.recv()
		got[m["janus"].(string)] = m
	}
	if got["ack"]["transaction"] != "m1" || got["event"]["transaction"] != "m1" || uint64(got["event"]["sender"].(float64)) != hid {
		t.Fatalf("ack/event: %v", got)
	}
	// detach: success first, then detached.
	if m := c.call(`{"janus":"detach","transaction":"d","session_id":%d,"handle_id":%d}`, sid, hid); m["janus"] != "success" || m["transaction"] != "d" {
		t.Fatalf("detach: %v", m)
	}
	if m := c.recv(); m["janus"] != "detached" || uint64(m["sender"].(float64)) != hid {
		t.Fatalf("detached: %v", m)
	}
	if m := c.call(`{"janus":"destroy","transaction":"x","session_id":%d}`, sid); m["janus"] != "success" {
		t.Fatalf("destroy: %v", m)
	}
	if e.gw.HasSession(sid) {
		t.Fatal("session survived destroy")
	}
}

func TestWebSocketBadInput(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.MaxMessageBytes = 1024 })
	c := e.dial()
	cases := []struct {
		msg  string
		code float64
	}{
		{`{"janus":`, 454},
		{`"hello"`, 455},
		{`{"janus":"create"}`, 456},
		{`{"janus":"keepalive","transaction":"k","session_id":99}`, 458},
		{`{"janus":"ping","transaction":"` + strings.Repeat("x", 2000) + `"}`, 450},
	}
	for _, tc := range cases {
		if m := c.call("%s", tc.msg); m["janus"] != "error" || errCode(m) != tc.code {
			t.Fatalf("%.40s: got %v, want %v", tc.msg, m, tc.code)
		}
		if m := c.call(`{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
			t.Fatalf("connection stopped serving after %.40s: %v", tc.msg, m)
		}
	}
}

// TestUnknownVerbAtEachLevel: over the WebSocket the ids in the body say where a request goes; a verb
// Janus does not have is 457 at the root and 453 at a session or handle, as Janus 1.1.2 answers.
func TestUnknownVerbAtEachLevel(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	sid, hid := c.session()
	for _, tc := range []struct {
		ids    string
		code   float64
		reason string
	}{
		{"", 457, "Unhandled request 'bogus' at this path"},
		{fmt.Sprintf(`,"session_id":%d`, sid), 453, "Unknown request 'bogus'"},
		{fmt.Sprintf(`,"session_id":%d,"handle_id":%d`, sid, hid), 453, "Unknown request 'bogus'"},
		{fmt.Sprintf(`,"handle_id":%d`, hid), 458, "Session not found"},
	} {
		m := c.call(`{"janus":"bogus","transaction":"b"%s}`, tc.ids)
		reason, _ := m["error"].(map[string]any)["reason"].(string)
		if m["janus"] != "error" || errCode(m) != tc.code || reason != tc.reason || m["transaction"] != "b" {
			t.Fatalf("bogus with ids %q: %v, want %v %q", tc.ids, m, tc.code, tc.reason)
		}
	}
	if m := c.call(`{"janus":"keepalive","transaction":"k","session_id":%d}`, sid); m["janus"] != "ack" {
		t.Fatalf("the socket stopped serving: %v", m)
	}
}

func TestCloseDestroysSessions(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	sid, hid := c.session()
	c.ws.Close()
	deadline := time.Now().Add(5 * time.Second)
	for e.gw.HasSession(sid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if e.gw.HasSession(sid) || !e.echo.Session(hid).Detached() {
		t.Fatal("closing the WebSocket did not destroy its session")
	}
}

func TestReclaimOverAnotherConnection(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.ReclaimSessionTimeout = 10 * time.Second })
	a := e.dial()
	sid, hid := a.session()
	a.ws.Close()
	// Wait until the server has processed the close: the session then has no transport.
	deadline := time.Now().Add(5 * time.Second)
	for transportOf(t, e.gw, sid, hid) != "" {
		if time.Now().After(deadline) {
			t.Fatal("server did not notice the closed WebSocket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !e.gw.HasSession(sid) {
		t.Fatal("session destroyed despite reclaim_session_timeout")
	}
	b := e.dial()
	if m := b.call(`{"janus":"claim","transaction":"cl","session_id":%d}`, sid); m["janus"] != "success" {
		t.Fatalf("claim: %v", m)
	}
	if m := b.call(`{"janus":"message","transaction":"s","session_id":%d,"handle_id":%d,"body":{"request":"sync"}}`, sid, hid); m["janus"] != "success" {
		t.Fatalf("message after claim: %v", m)
	}
	b.send(`{"janus":"message","transaction":"m","session_id":%d,"handle_id":%d,"body":{}}`, sid, hid)
	for i := 0; i < 2; i++ { // the ack and the event, in either order, both on the new connection
		if m := b.recv(); m["transaction"] != "m" {
			t.Fatalf("unexpected message after claim: %v", m)
		}
	}
}

func TestTimeoutEventKeepsSocketOpen(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.SessionTimeout = time.Second })
	c := e.dial()
	sid, _ := c.session()
	m := c.recv()
	if m["janus"] != "timeout" || uint64(m["session_id"].(float64)) != sid {
		t.Fatalf("expected timeout: %v", m)
	}
	if m := c.call(`{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
		t.Fatalf("socket unusable after timeout: %v", m)
	}
}

// transportOf reads session_transport from the admin API's handle_info.
func transportOf(t *testing.T, gw *gateway.Gateway, sid, hid uint64) string {
	t.Helper()
	req := fmt.Sprintf(`{"janus":"handle_info","transaction":"h","session_id":%d,"handle_id":%d,"admin_secret":"janusoverlord"}`, sid, hid)
	m := gw.Admin(context.Background(), []byte(req), gateway.Origin{})
	info, ok := m.Get("info").(map[string]any)
	if !ok {
		t.Fatalf("handle_info: %v", m)
	}
	return info["session_transport"].(string)
}
