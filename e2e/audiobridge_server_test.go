package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"
	"github.com/strata-rtc/strata/web"
)

// The audiobridge tests run against strata. With STRATA_E2E_AUDIOBRIDGE=janus they run, unchanged,
// against Debian's Janus 1.1.2 instead (started by the test on free ports, with the audiobridge
// plugin and the HTTP and WebSocket transports only): what passes there is what Janus does, so a
// test that passes against Janus and fails against strata has found a difference of strata's.
const (
	abTargetEnv = "STRATA_E2E_AUDIOBRIDGE"
	janusBin    = "/usr/bin/janus"
	janusLibDir = "/usr/lib/x86_64-linux-gnu/janus"
)

// abServer is the server under test: its Janus API over HTTP and WebSocket, an origin serving
// strata's web pages (strata itself; for Janus a test server next to it), and its admin API.
type abServer struct {
	Name        string // "strata" or "janus"
	HTTPAPI     string // http://host:port/janus
	WSAPI       string // ws://host:port
	Pages       string // http://host:port, where web/ is served
	adminURL    string // http://host:port/admin
	adminSecret string
}

// startAudioBridge starts the server the audiobridge tests run against (strata unless
// STRATA_E2E_AUDIOBRIDGE=janus). Both have the sample room 1234 as their defaults do (16 kHz, no
// talking events).
func startAudioBridge(t *testing.T) *abServer {
	t.Helper()
	switch target := os.Getenv(abTargetEnv); target {
	case "", "strata":
		srv := startStrata(t) // the default configuration has the audiobridge and its room 1234
		return &abServer{
			Name:        "strata",
			HTTPAPI:     "http://" + srv.HTTPAddr() + "/janus",
			WSAPI:       "ws://" + srv.WSAddr(),
			Pages:       "http://" + srv.HTTPAddr(),
			adminURL:    "http://" + srv.AdminAddr() + "/admin",
			adminSecret: srv.AdminSecret(),
		}
	case "janus":
		return startJanus(t, abTargetEnv, "libjanus_audiobridge.so", map[string]string{
			"janus.plugin.audiobridge.jcfg": `general: {
}
room-1234: {
	description = "Demo Room"
	sampling_rate = 16000
}
`})
	default:
		t.Fatalf("%s=%q: want strata or janus", abTargetEnv, target)
		return nil
	}
}

// startJanus runs Debian's Janus with a generated configuration in a temporary directory, as a
// child process that the test stops by its PID: one plugin (its library name, e.g.
// "libjanus_audiobridge.so") with the configuration files in pluginFiles (name → content), the
// HTTP and WebSocket transports on free ports. env names the variable that chose Janus, for messages.
func startJanus(t *testing.T, env, plugin string, pluginFiles map[string]string) *abServer {
	t.Helper()
	if _, err := os.Stat(janusBin); err != nil {
		t.Fatalf("%s=janus needs Debian's janus package (%v)", env, err)
	}
	dir := t.TempDir()
	httpPort, wsPort, adminPort := freePort(t), freePort(t), freePort(t)
	const secret = "e2e-admin-secret"
	files := janusConfig(dir, plugin, httpPort, wsPort, adminPort, secret)
	for name, body := range pluginFiles {
		files[name] = body
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(janusBin, "-C", filepath.Join(dir, "janus.jcfg"), "-F", dir, "-o")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Janus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("Janus log:\n%s", logs.Tail(64<<10))
		}
	})
	s := &abServer{
		Name:        "janus",
		HTTPAPI:     fmt.Sprintf("http://127.0.0.1:%d/janus", httpPort),
		WSAPI:       fmt.Sprintf("ws://127.0.0.1:%d", wsPort),
		adminURL:    fmt.Sprintf("http://127.0.0.1:%d/admin", adminPort),
		adminSecret: secret,
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("Janus exited at start-up:\n%s", logs.Tail(8<<10))
		default:
		}
		if res, err := http.Get(s.HTTPAPI + "/info"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Janus did not answer %s/info within 15 s:\n%s", s.HTTPAPI, logs.Tail(8<<10))
		}
	}
	// strata serves its pages next to the API; for Janus a test server does, and the pages are
	// pointed at Janus's API with ?server= (or ?ws=).
	pages := httptest.NewServer(web.Handler())
	t.Cleanup(pages.Close)
	s.Pages = pages.URL
	return s
}

// janusConfig is Janus's configuration: one plugin (configured by the caller), the HTTP transport
// (API and admin API, with CORS for pages of other origins) and the WebSocket transport, on
// 127.0.0.1; everything else off.
func janusConfig(dir, plugin string, httpPort, wsPort, adminPort int, secret string) map[string]string {
	others := func(sub string, keep ...string) string {
		libs, _ := filepath.Glob(filepath.Join(janusLibDir, sub, "libjanus_*.so"))
		var names []string
		for _, l := range libs {
			base := filepath.Base(l)
			kept := false
			for _, k := range keep {
				kept = kept || base == k
			}
			if !kept {
				names = append(names, base)
			}
		}
		return strings.Join(names, ",")
	}
	return map[string]string{
		"janus.jcfg": fmt.Sprintf(`general: {
	configs_folder = "%[1]s"
	plugins_folder = "%[2]s/plugins"
	transports_folder = "%[2]s/transports"
	events_folder = "%[2]s/events"
	loggers_folder = "%[2]s/loggers"
	debug_level = 4
	admin_secret = "%[3]s"
}
media: {
}
nat: {
	nice_debug = false
	ignore_mdns = true
}
plugins: {
	disable = "%[4]s"
}
transports: {
	disable = "%[5]s"
}
loggers: {
	disable = "libjanus_jsonlog.so"
}
events: {
	broadcast = false
}
`, dir, janusLibDir, secret, others("plugins", plugin),
			others("transports", "libjanus_http.so", "libjanus_websockets.so")),
		"janus.transport.http.jcfg": fmt.Sprintf(`general: {
	json = "compact"
	base_path = "/janus"
	http = true
	port = %d
	ip = "127.0.0.1"
	https = false
}
admin: {
	admin_base_path = "/admin"
	admin_http = true
	admin_port = %d
	admin_ip = "127.0.0.1"
	admin_https = false
}
cors: {
	allow_origin = "*"
}
`, httpPort, adminPort),
		"janus.transport.websockets.jcfg": fmt.Sprintf(`general: {
	json = "compact"
	ws = true
	ws_port = %d
	ws_ip = "127.0.0.1"
	wss = false
}
admin: {
	admin_ws = false
	admin_wss = false
}
`, wsPort),
	}
}

// freePort is a TCP port on 127.0.0.1 that nothing listened on a moment ago, for a server that
// cannot be told to take ":0".
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// admin sends one admin API request (admin_secret and transaction added) and decodes the reply.
func (s *abServer) admin(t *testing.T, req map[string]any, reply any) {
	t.Helper()
	req["transaction"] = "e2e"
	req["admin_secret"] = s.adminSecret
	body, _ := json.Marshal(req)
	res, err := http.Post(s.adminURL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("admin %s: %v", req["janus"], err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(reply); err != nil {
		t.Fatalf("admin %s: decoding the reply: %v", req["janus"], err)
	}
}

// request sends a synchronous audiobridge request through the admin API's message_plugin and
// returns the plugin's response.
func (s *abServer) request(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	var reply struct {
		Janus    string         `json:"janus"`
		Response map[string]any `json:"response"`
	}
	s.admin(t, map[string]any{"janus": "message_plugin", "plugin": "janus.plugin.audiobridge", "request": body}, &reply)
	if reply.Janus != "success" {
		t.Fatalf("admin message_plugin %v: %+v", body, reply)
	}
	return reply.Response
}

// createRoom creates an audiobridge room with options (Janus's create) and fails the test unless
// the plugin says created.
func (s *abServer) createRoom(t *testing.T, room uint64, options map[string]any) {
	t.Helper()
	body := map[string]any{"request": "create", "room": room}
	for k, v := range options {
		body[k] = v
	}
	if r := s.request(t, body); r["audiobridge"] != "created" {
		t.Fatalf("creating audiobridge room %d: %v", room, r)
	}
}

// participants lists a room's participants (listparticipants).
func (s *abServer) participants(t *testing.T, room uint64) []map[string]any {
	t.Helper()
	r := s.request(t, map[string]any{"request": "listparticipants", "room": room})
	list, _ := r["participants"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, p := range list {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// waitNoSessions fails the test unless the server has no session left within timeout.
func (s *abServer) waitNoSessions(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var reply struct {
			Janus    string        `json:"janus"`
			Sessions []json.Number `json:"sessions"`
		}
		s.admin(t, map[string]any{"janus": "list_sessions"}, &reply)
		if reply.Janus != "success" {
			t.Fatalf("admin list_sessions: %+v", reply)
		}
		if len(reply.Sessions) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still has sessions %v after %v", s.Name, reply.Sessions, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
