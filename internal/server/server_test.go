package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// testAdminSecret is the admin secret the tests configure (by default strata generates one).
const testAdminSecret = "test-admin-secret"

// testConfig binds every listener (and the sample mountpoints) to a free port, with testAdminSecret.
func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.AdminSecret = testAdminSecret
	cfg.Media.ICE.Loopback = true
	cfg.Plugins.Streaming.FreePorts()
	return cfg
}

// startServer starts cfg's server, closed when the test ends.
func startServer(t *testing.T, cfg *config.Config) *Server {
	t.Helper()
	s, err := New(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestServerServesAPIAdminAndDemos(t *testing.T) {
	s, err := New(testConfig(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	httpAddr, adminAddr := s.HTTPAddr(), s.AdminAddr()

	info := post(t, "http://"+httpAddr+"/janus", `{"janus":"info","transaction":"i"}`)
	plugins, _ := info["plugins"].(map[string]any)
	if info["janus"] != "server_info" || plugins["janus.plugin.echotest"] == nil {
		t.Fatalf("info = %v, want server_info listing the echotest", info)
	}
	denied := post(t, "http://"+adminAddr+"/admin", `{"janus":"list_sessions","transaction":"a"}`)
	if e, _ := denied["error"].(map[string]any); e == nil || e["code"] != float64(403) {
		t.Fatalf("admin without secret = %v, want error 403", denied)
	}
	ok := post(t, "http://"+adminAddr+"/admin", `{"janus":"list_sessions","transaction":"a","admin_secret":"`+testAdminSecret+`"}`)
	if ok["janus"] != "success" {
		t.Fatalf("admin with secret = %v", ok)
	}
	resp, err := http.Get("http://" + httpAddr + "/demos/list.js") // the index's list of demos
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "echotest.html") {
		t.Fatalf("demo index: status %d, %d bytes without a link to the echotest", resp.StatusCode, len(page))
	}

	s.Close()
	// Every port is released on Close, so a new server can take it.
	for _, addr := range []string{httpAddr, adminAddr} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s still bound after Close: %v", addr, err)
		}
		ln.Close()
	}
}

func TestServerRefusesATakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig(t)
	cfg.Transports.WebSocket.Listen = ln.Addr().String()
	s, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "websocket") {
		t.Fatalf("Start on a taken port: %v, want an error naming the websocket transport", err)
	}
	s.Close()
}
