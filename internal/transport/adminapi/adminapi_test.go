package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/plugin"
)

type env struct {
	t    *testing.T
	gw   *gateway.Gateway
	echo *gatewaytest.Echo
	sink *gatewaytest.Sink
	url  string
}

// testSecret is the admin secret of the tests' gateway (strata's own default is a random one).
const testSecret = "test-admin-secret"

// newEnv serves the admin API of a gateway with an echo plugin; mods adjust the configuration.
func newEnv(t *testing.T, mods ...func(*config.Config)) *env {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.Admin.AdminSecret = testSecret
	for _, m := range mods {
		m(cfg)
	}
	echo := gatewaytest.NewEcho()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gw := gateway.New(cfg, nil, []plugin.Plugin{echo, gatewaytest.Failing{}}, log, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(New(gw, cfg))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { srv.Close(); gw.Close() })
	return &env{t: t, gw: gw, echo: echo, sink: gatewaytest.NewSink(), url: srv.URL + "/admin"}
}

func (e *env) post(path, body string) (int, map[string]any) {
	e.t.Helper()
	body = strings.ReplaceAll(body, "SECRET", `"admin_secret":"`+testSecret+`"`)
	resp, err := http.Post(e.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		e.t.Fatalf("not JSON: %v", err)
	}
	return resp.StatusCode, m
}

// session creates a session and handle through the gateway directly (a Janus API client would).
func (e *env) session() (sid, hid uint64) {
	e.t.Helper()
	ctx := context.Background()
	m := e.gw.Handle(ctx, []byte(`{"janus":"create","transaction":"c"}`), gateway.Origin{Sink: e.sink})
	sid = m.Data.(map[string]uint64)["id"]
	m = e.gw.Handle(ctx, []byte(fmt.Sprintf(`{"janus":"attach","transaction":"a","session_id":%d,"plugin":"%s","opaque_id":"adm"}`,
		sid, gatewaytest.EchoPackage)), gateway.Origin{Sink: e.sink})
	return sid, m.Data.(map[string]uint64)["id"]
}

func code(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestAdminOverHTTP(t *testing.T) {
	e := newEnv(t)
	sid, hid := e.session()
	s, h := fmt.Sprintf("/%d", sid), fmt.Sprintf("/%d/%d", sid, hid)
	success := []struct{ path, body, member string }{
		{"", `{"janus":"info","transaction":"i"}`, "plugins"},
		{"", `{"janus":"ping","transaction":"p"}`, ""},
		{"", `{"janus":"get_status","transaction":"g",SECRET}`, "status"},
		{"", `{"janus":"list_sessions","transaction":"l",SECRET}`, "sessions"},
		{s, `{"janus":"list_handles","transaction":"l",SECRET}`, "handles"},
		{"", fmt.Sprintf(`{"janus":"list_handles","transaction":"l","session_id":%d,SECRET}`, sid), "handles"},
		{h, `{"janus":"handle_info","transaction":"h",SECRET}`, "info"},
		{"", `{"janus":"set_session_timeout","transaction":"t","timeout":120,SECRET}`, "timeout"},
		{"", `{"janus":"set_log_level","transaction":"t","level":5,SECRET}`, "level"},
		{"", `{"janus":"accept_new_sessions","transaction":"t","accept":true,SECRET}`, "accept"},
		{"", `{"janus":"message_plugin","transaction":"t","plugin":"` + gatewaytest.EchoPackage + `","request":{"request":"list"},SECRET}`, "response"},
		{h, `{"janus":"hangup_webrtc","transaction":"h",SECRET}`, ""},
		{h, `{"janus":"detach_handle","transaction":"d",SECRET}`, ""},
		{s, `{"janus":"destroy_session","transaction":"d",SECRET}`, ""},
	}
	for _, c := range success {
		status, m := e.post(c.path, c.body)
		ok := status == 200 && (m["janus"] == "success" || m["janus"] == "server_info" || m["janus"] == "pong")
		if _, has := m[c.member]; !ok || (c.member != "" && !has) {
			t.Fatalf("%s %s: %d %v", c.path, c.body, status, m)
		}
	}
	if e.gw.HasSession(sid) || !e.echo.Session(hid).Detached() {
		t.Fatal("destroy_session/detach_handle had no effect")
	}
	if e.gw.SessionTimeout() != 120*time.Second {
		t.Fatalf("set_session_timeout: %v", e.gw.SessionTimeout())
	}
}

func TestAdminHTTPErrors(t *testing.T) {
	e := newEnv(t)
	sid, _ := e.session()
	cases := []struct {
		path, body string
		status     int
		code       float64
	}{
		{"", `{"janus":"list_sessions","transaction":"l"}`, 200, 403},
		{"", `{"janus":"list_sessions","transaction":"l","admin_secret":"nope"}`, 200, 403},
		{"", `{"janus":"handle_info","transaction":"l",SECRET}`, 200, 457},
		{"/77", `{"janus":"list_handles","transaction":"l",SECRET}`, 200, 458},
		{fmt.Sprintf("/%d/77", sid), `{"janus":"handle_info","transaction":"l",SECRET}`, 200, 459},
		{"", `{"janus":"message_plugin","transaction":"m","plugin":"nope","request":{},SECRET}`, 200, 460},
		{"", `{"janus":"message_plugin","transaction":"m","plugin":"` + gatewaytest.FailingPackage + `","request":{},SECRET}`, 200, 462},
		{"", `{"janus":"attach","transaction":"l",SECRET}`, 200, 457},
		{"", `not json`, 200, 454},
	}
	for _, c := range cases {
		status, m := e.post(c.path, c.body)
		if status != c.status || code(m) != c.code {
			t.Fatalf("%s %s: %d %v, want %d/%v", c.path, c.body, status, m, c.status, c.code)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, e.url, strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", resp.StatusCode)
	}
}

func (e *env) get(path string) (int, http.Header, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
	req.Header.Set("Origin", "http://demos.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		e.t.Fatalf("GET %s: not JSON: %v", path, err)
	}
	return resp.StatusCode, resp.Header, m
}

// TestAdminGETAsJanus: the GETs Janus 1.1.2's admin API answers (recorded from it). Only base/info
// has an answer of its own, the server info that the admin demo page asks for before anything
// else (jQuery's cache:false adds ?_=<time>); there is no long-poll, so any other GET is 454 with
// HTTP 200; a POST to base/info is 450.
func TestAdminGETAsJanus(t *testing.T) {
	// Janus's admin page is served from another origin than the admin API: it needs CORS, which the
	// operator turns on for it.
	e := newEnv(t, func(c *config.Config) { c.Transports.Admin.CORSOrigin = "*" })
	sid, hid := e.session()
	for _, path := range []string{"/info", "/info?_=1717171717171"} {
		status, hdr, m := e.get(path)
		tx, _ := m["transaction"].(string)
		if status != 200 || m["janus"] != "server_info" || m["plugins"] == nil || len(tx) != 11 {
			t.Fatalf("GET %s: %d %v", path, status, m)
		}
		if hdr.Get("Access-Control-Allow-Origin") != "*" || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s headers: %v", path, hdr)
		}
	}
	for _, path := range []string{"", "/", fmt.Sprintf("/%d", sid), fmt.Sprintf("/%d/%d", sid, hid), "/ping", "/garbage"} {
		status, _, m := e.get(path)
		reason, _ := m["error"].(map[string]any)["reason"].(string)
		if status != 200 || m["janus"] != "error" || code(m) != 454 || reason != "Request payload missing" {
			t.Fatalf("GET %q: %d %v", path, status, m)
		}
	}
	if status, _, m := e.get("/1/2/3"); status != http.StatusNotFound || m["janus"] != "error" {
		t.Fatalf("GET too deep: %d %v", status, m)
	}
	status, m := e.post("/info", `{"janus":"info","transaction":"i"}`)
	reason, _ := m["error"].(map[string]any)["reason"].(string)
	if status != 200 || code(m) != 450 || reason != "Use GET for the info endpoint" {
		t.Fatalf("POST /info: %d %v", status, m)
	}
	// A preflight for the page's GET with a JSON content type, from another origin.
	req, _ := http.NewRequest(http.MethodOptions, e.url+"/info", nil)
	req.Header.Set("Origin", "http://demos.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Headers") != "content-type" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "GET") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// Still serving POSTs.
	if status, m := e.post("", `{"janus":"list_sessions","transaction":"l",SECRET}`); status != 200 || m["janus"] != "success" {
		t.Fatalf("after the GETs: %d %v", status, m)
	}
}

// TestAdminNoCORSByDefault: a web page on another origin can send a "simple" request (a text/plain
// POST needs no preflight) but must not be able to read the reply; with the default configuration the
// admin API sends no CORS headers, on a POST, a GET or a preflight.
func TestAdminNoCORSByDefault(t *testing.T) {
	if o := config.Default().Transports.Admin.CORSOrigin; o != "" {
		t.Fatalf("default transports.admin.cors_origin = %q, want none", o)
	}
	e := newEnv(t)
	for _, r := range []struct{ method, path, body, contentType string }{
		{http.MethodPost, "", `{"janus":"list_sessions","transaction":"l","admin_secret":"` + testSecret + `"}`, "text/plain"},
		{http.MethodGet, "/info", "", ""},
		{http.MethodOptions, "", "", ""},
	} {
		req, _ := http.NewRequest(r.method, e.url+r.path, strings.NewReader(r.body))
		req.Header.Set("Origin", "http://evil.example")
		if r.contentType != "" {
			req.Header.Set("Content-Type", r.contentType)
		}
		if r.method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "content-type")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"} {
			if v := resp.Header.Get(h); v != "" {
				t.Errorf("%s %s from another origin: %s: %q, want none", r.method, r.path, h, v)
			}
		}
	}
}
