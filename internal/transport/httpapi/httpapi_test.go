package httpapi

import (
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
	url  string // http://127.0.0.1:port/janus
	h    *Handler
}

func newEnv(t *testing.T, mutate func(*config.Config)) *env {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.LongPollTimeout = 300 * time.Millisecond
	if mutate != nil {
		mutate(cfg)
	}
	echo := gatewaytest.NewEcho()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gw := gateway.New(cfg, nil, []plugin.Plugin{echo, gatewaytest.Failing{}}, log, nil,
		gateway.WithWatchdogInterval(50*time.Millisecond))
	h := New(gw, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { srv.Close(); gw.Close() })
	return &env{t: t, gw: gw, echo: echo, url: srv.URL + cfg.Transports.HTTP.BasePath, h: h}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (e *env) post(path, body string) (int, map[string]any) {
	e.t.Helper()
	resp, err := noRedirect.Post(e.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	return decode(e.t, resp)
}

func (e *env) get(path string) (int, any) {
	e.t.Helper()
	resp, err := noRedirect.Get(e.url + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, v
}

func decode(t *testing.T, resp *http.Response) (int, map[string]any) {
	t.Helper()
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("reply is not a JSON object: %v", err)
	}
	return resp.StatusCode, m
}

func id(t *testing.T, m map[string]any) uint64 {
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

// pollFor long-polls until an event with the given janus verb arrives (or 5 s pass).
func (e *env) pollFor(sid uint64, kind string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		status, v := e.get(fmt.Sprintf("/%d?maxev=1", sid))
		if status != http.StatusOK {
			e.t.Fatalf("long-poll status %d: %v", status, v)
		}
		m := v.(map[string]any)
		if m["janus"] == kind {
			return m
		}
	}
	e.t.Fatalf("no %q event within 5 s", kind)
	return nil
}

func (e *env) session() (sid, hid uint64) {
	e.t.Helper()
	_, m := e.post("", `{"janus":"create","transaction":"c"}`)
	sid = id(e.t, m)
	_, m = e.post(fmt.Sprintf("/%d", sid), `{"janus":"attach","transaction":"a","plugin":"`+gatewaytest.EchoPackage+`"}`)
	return sid, id(e.t, m)
}

func TestHTTPCallFlow(t *testing.T) {
	e := newEnv(t, nil)
	sid, hid := e.session()
	hp := fmt.Sprintf("/%d/%d", sid, hid)

	status, m := e.post(hp, `{"janus":"message","transaction":"m1","body":{"audio":true}}`)
	if status != 200 || m["janus"] != "ack" || m["transaction"] != "m1" || m["hint"] != "I'm taking my time!" {
		t.Fatalf("message: %d %v", status, m)
	}
	ev := e.pollFor(sid, "event")
	if ev["transaction"] != "m1" || uint64(ev["sender"].(float64)) != hid || uint64(ev["session_id"].(float64)) != sid {
		t.Fatalf("event: %v", ev)
	}
	if _, m = e.post(hp, `{"janus":"message","transaction":"m2","body":{"request":"sync"}}`); m["janus"] != "success" || m["plugindata"] == nil {
		t.Fatalf("sync: %v", m)
	}
	if _, m = e.post(hp, `{"janus":"detach","transaction":"d"}`); m["janus"] != "success" {
		t.Fatalf("detach: %v", m)
	}
	if ev := e.pollFor(sid, "detached"); uint64(ev["sender"].(float64)) != hid {
		t.Fatalf("detached: %v", ev)
	}
	if _, m = e.post(fmt.Sprintf("/%d", sid), `{"janus":"destroy","transaction":"x"}`); m["janus"] != "success" {
		t.Fatalf("destroy: %v", m)
	}
	if status, v := e.get(fmt.Sprintf("/%d", sid)); status != http.StatusNotFound || errCode(v.(map[string]any)) != 458 {
		t.Fatalf("long-poll after destroy: %d %v", status, v)
	}
}

func TestLongPollKeepalive(t *testing.T) {
	e := newEnv(t, nil)
	sid, _ := e.session()
	start := time.Now()
	status, v := e.get(fmt.Sprintf("/%d?maxev=10&rid=1", sid))
	if status != 200 || v.(map[string]any)["janus"] != "keepalive" {
		t.Fatalf("idle long-poll: %d %v", status, v)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("keepalive took %v with a 300 ms long_poll_timeout", time.Since(start))
	}
}

func TestLongPollMaxevArray(t *testing.T) {
	e := newEnv(t, nil)
	sid, hid := e.session()
	for i := 0; i < 3; i++ {
		e.post(fmt.Sprintf("/%d/%d", sid, hid), fmt.Sprintf(`{"janus":"message","transaction":"m%d","body":{}}`, i))
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for len(seen) < 3 && time.Now().Before(deadline) {
		_, v := e.get(fmt.Sprintf("/%d?maxev=10", sid))
		arr, ok := v.([]any)
		if !ok {
			if v.(map[string]any)["janus"] == "keepalive" {
				continue
			}
			t.Fatalf("maxev=10 did not return an array: %v", v)
		}
		for _, x := range arr {
			seen[x.(map[string]any)["transaction"].(string)] = true
		}
	}
	if len(seen) != 3 {
		t.Fatalf("events seen: %v", seen)
	}
}

func TestCORS(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Transports.HTTP.CORSOrigin = "https://demo.example" })
	req, _ := http.NewRequest(http.MethodOptions, e.url, nil)
	req.Header.Set("Access-Control-Request-Headers", "content-type, x-custom")
	req.Header.Set("Origin", "https://demo.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != 200 || h.Get("Access-Control-Allow-Origin") != "https://demo.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		h.Get("Access-Control-Allow-Headers") != "content-type, x-custom" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, h)
	}
	resp, err = http.Post(e.url, "application/json", strings.NewReader(`{"janus":"ping","transaction":"p"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://demo.example" {
		t.Fatalf("POST without CORS headers: %v", resp.Header)
	}
}

func TestHTTPSessionTimeout(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.General.SessionTimeout = time.Second })
	sid, hid := e.session()
	deadline := time.Now().Add(5 * time.Second)
	// No requests, no long-polls: the session must expire, and its handle be detached (which
	// follows the session's removal).
	for (e.gw.HasSession(sid) || !e.echo.Session(hid).Detached()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if e.gw.HasSession(sid) || !e.echo.Session(hid).Detached() {
		t.Fatal("session did not time out")
	}
	// The timeout event waits for the next long-poll; after that the session is gone for good.
	status, v := e.get(fmt.Sprintf("/%d", sid))
	if m, _ := v.(map[string]any); status != 200 || m["janus"] != "timeout" || uint64(m["session_id"].(float64)) != sid {
		t.Fatalf("expected the timeout event: %d %v", status, v)
	}
	if status, _ := e.get(fmt.Sprintf("/%d", sid)); status != http.StatusNotFound {
		t.Fatalf("after timeout: %d", status)
	}
}

// TestDestroyDoesNotFailTheHeldPoll checks what janus.js relies on: a poll held while the client
// destroys its session ends with keepalive, as with Janus, not with a 404 that races the destroy
// reply; the next poll on the gone session gets the 404.
func TestDestroyDoesNotFailTheHeldPoll(t *testing.T) {
	e := newEnv(t, nil)
	sid, _ := e.session()
	type result struct {
		status int
		v      any
	}
	held := make(chan result, 1)
	go func() {
		status, v := e.get(fmt.Sprintf("/%d?maxev=10", sid))
		held <- result{status, v}
	}()
	time.Sleep(50 * time.Millisecond) // let the poll be held
	if status, m := e.post(fmt.Sprintf("/%d", sid), `{"janus":"destroy","transaction":"d"}`); status != 200 || m["janus"] != "success" {
		t.Fatalf("destroy: %d %v", status, m)
	}
	r := <-held
	if m, _ := r.v.(map[string]any); r.status != 200 || m["janus"] != "keepalive" {
		t.Fatalf("held poll ended with %d %v, want 200 keepalive", r.status, r.v)
	}
	if status, _ := e.get(fmt.Sprintf("/%d?maxev=10", sid)); status != 404 {
		t.Fatalf("poll after destroy: %d, want 404", status)
	}
}

func TestCloseReleasesHeldPolls(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Transports.HTTP.LongPollTimeout = time.Minute })
	sid, _ := e.session()
	done := make(chan int, 1)
	go func() {
		status, _ := e.get(fmt.Sprintf("/%d", sid))
		done <- status
	}()
	time.Sleep(50 * time.Millisecond)
	e.h.Close()
	select {
	case status := <-done:
		if status != 200 {
			t.Fatalf("released poll: %d", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release a poll held for a minute")
	}
}
