package adminapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/plugin"
)

// wsEnv serves the admin WebSocket of a gateway with an echo plugin.
type wsEnv struct {
	t   *testing.T
	gw  *gateway.Gateway
	url string
	h   *WSHandler
}

func newWSEnv(t *testing.T, mods ...func(*config.Config)) *wsEnv {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.Admin.AdminSecret = testSecret
	cfg.General.MaxMessageBytes = 4096
	for _, m := range mods {
		m(cfg)
	}
	gw := gateway.New(cfg, nil, []plugin.Plugin{gatewaytest.NewEcho()}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	h := NewWS(gw, cfg)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close(); gw.Close() })
	return &wsEnv{t: t, gw: gw, h: h, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

func (e *wsEnv) dial(protocols ...string) *websocket.Conn {
	e.t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial(e.url, nil)
	if err != nil {
		e.t.Fatalf("dial: %v (%v)", err, resp)
	}
	if c.Subprotocol() != Subprotocol {
		e.t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// ask sends one request (SECRET replaced by the admin secret) and reads its reply.
func ask(t *testing.T, c *websocket.Conn, req string) map[string]any {
	t.Helper()
	req = strings.ReplaceAll(req, "SECRET", `"admin_secret":"`+testSecret+`"`)
	if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("reply to %s: %v", req, err)
	}
	return m
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestWSAdminVerbs(t *testing.T) {
	e := newWSEnv(t, func(c *config.Config) { c.General.TokenAuth = true })
	c := e.dial(Subprotocol)
	if m := ask(t, c, `{"janus":"info","transaction":"i"}`); m["janus"] != "server_info" || m["transaction"] != "i" {
		t.Fatalf("info: %v", m)
	}
	if m := ask(t, c, `{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" || m["transaction"] != "p" {
		t.Fatalf("ping: %v", m)
	}
	if m := ask(t, c, `{"janus":"list_sessions","transaction":"l"}`); errCode(m) != 403 || m["transaction"] != "l" {
		t.Fatalf("list_sessions without the secret: %v", m)
	}
	if m := ask(t, c, `{"janus":"list_sessions","transaction":"l",SECRET}`); m["janus"] != "success" {
		t.Fatalf("list_sessions: %v", m)
	}
	m := ask(t, c, `{"janus":"add_token","transaction":"a","token":"tk","plugins":["`+gatewaytest.EchoPackage+`"],SECRET}`)
	if data, _ := m["data"].(map[string]any); m["janus"] != "success" || m["transaction"] != "a" || len(data["plugins"].([]any)) != 1 {
		t.Fatalf("add_token: %v", m)
	}
	m = ask(t, c, `{"janus":"list_tokens","transaction":"t",SECRET}`)
	if tokens, _ := m["data"].(map[string]any)["tokens"].([]any); len(tokens) != 1 {
		t.Fatalf("list_tokens: %v", m)
	}
	// A session made over the Janus API, seen and destroyed over the admin WebSocket.
	sid := mustID(t, e.gw.Handle(context.Background(), []byte(`{"janus":"create","transaction":"c","token":"tk"}`), gateway.Origin{Sink: gatewaytest.NewSink()}).Data)
	m = ask(t, c, `{"janus":"list_sessions","transaction":"l",SECRET}`)
	if s, _ := m["sessions"].([]any); len(s) != 1 || s[0] != float64(sid) {
		t.Fatalf("list_sessions: %v, want [%d]", m, sid)
	}
	if m := ask(t, c, `{"janus":"destroy_session","transaction":"d","session_id":`+itoa(sid)+`,SECRET}`); m["janus"] != "success" || e.gw.HasSession(sid) {
		t.Fatalf("destroy_session: %v", m)
	}
	if m := ask(t, c, `{"janus":"list_handles","transaction":"d","session_id":`+itoa(sid)+`,SECRET}`); errCode(m) != 458 {
		t.Fatalf("list_handles of a gone session: %v", m)
	}
}

// TestWSAdminBadInput: malformed requests get Janus's errors and the connection carries on.
func TestWSAdminBadInput(t *testing.T) {
	e := newWSEnv(t)
	c := e.dial("other", Subprotocol)
	for req, code := range map[string]float64{
		`{`:                                   454,
		`[1]`:                                 455,
		`{"janus":"info"}`:                    456,
		`{"transaction":"x"}`:                 452,
		`{"janus":"bogus","transaction":"x"}`: 403,
		`{"janus":"bogus","transaction":"x",SECRET}`:                                   457,
		`{"janus":"create","transaction":"x",SECRET}`:                                  457,
		`{"janus":"start_pcap","transaction":"x","session_id":1,"handle_id":2,SECRET}`: 458,
		`{"janus":"handle_info","transaction":"x","handle_id":2,SECRET}`:               458,
		`{"janus":"set_log_level","transaction":"x","level":"loud",SECRET}`:            467,
		`{"janus":"add_token","transaction":"x","token":"t",SECRET}`:                   490,
		strings.Repeat(" ", 5000):                                                      450,
	} {
		if m := ask(t, c, req); errCode(m) != code {
			t.Errorf("%.60s: %v, want %v", req, m, code)
		}
	}
	if m := ask(t, c, `{"janus":"ping","transaction":"after"}`); m["janus"] != "pong" {
		t.Fatalf("after bad input: %v", m)
	}
	// Binary frames are requests too (Janus reads both).
	if err := c.WriteMessage(websocket.BinaryMessage, []byte(`{"janus":"ping","transaction":"b"}`)); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := c.ReadJSON(&m); err != nil || m["janus"] != "pong" {
		t.Fatalf("binary ping: %v %v", m, err)
	}
	// Far over the limit: the connection is closed, the server serves the next one.
	_ = c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 5*4096)))
	if _, _, err := c.ReadMessage(); err == nil {
		t.Error("a message over 4x the limit did not close the connection")
	}
	if m := ask(t, e.dial(Subprotocol), `{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
		t.Fatalf("new connection: %v", m)
	}
}

func TestWSAdminHandshake(t *testing.T) {
	e := newWSEnv(t)
	for name, hdr := range map[string]http.Header{
		"no subprotocol":  {},
		"the Janus API's": {"Sec-WebSocket-Protocol": {"janus-protocol"}},
		"another origin":  {"Sec-WebSocket-Protocol": {Subprotocol}, "Origin": {"http://evil.example"}},
	} {
		_, resp, err := websocket.DefaultDialer.Dial(e.url, hdr)
		if err == nil || resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
			t.Errorf("%s: handshake accepted", name)
		}
	}
	resp, err := http.Get(strings.Replace(e.url, "ws", "http", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain GET: %d", resp.StatusCode)
	}
	// The configured admin origin may connect (an admin page the operator serves).
	e2 := newWSEnv(t, func(c *config.Config) { c.Transports.Admin.CORSOrigin = "https://ops.example" })
	c, _, err := websocket.DefaultDialer.Dial(e2.url, http.Header{"Sec-WebSocket-Protocol": {Subprotocol}, "Origin": {"https://ops.example"}})
	if err != nil {
		t.Fatalf("configured origin: %v", err)
	}
	c.Close()
}

func mustID(t *testing.T, data any) uint64 {
	t.Helper()
	d, ok := data.(map[string]uint64)
	if !ok {
		t.Fatalf("no id in %v", data)
	}
	return d["id"]
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
