package e2e

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/server"
)

// startStrata runs a strata server with its default configuration, except that every listener binds
// a free port on 127.0.0.1 (the sample mountpoints a free port each) and mods apply. Media still gathers host candidates on every interface:
// Chromium ignores loopback candidates, so the call runs over the machine's own non-loopback address.
// The admin secret is the one the server generates (srv.AdminSecret()). The server's log is kept and
// printed if the test fails.
func startStrata(t *testing.T, mods ...func(*config.Config)) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Listen = "127.0.0.1:0"
	cfg.Plugins.Streaming.FreePorts() // the streaming tests move the samples they feed to ports they chose
	stableICE(cfg)
	for _, m := range mods {
		m(cfg)
	}

	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := server.New(cfg, log, nil)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("server.Start: %v", err)
	}
	t.Cleanup(func() {
		srv.Close()
		if t.Failed() {
			t.Logf("strata log:\n%s", logs.Tail(64<<10))
		}
	})
	return srv
}

// adminSessions asks the admin API for the list of live sessions.
func adminSessions(t *testing.T, srv *server.Server) []json.Number {
	t.Helper()
	req := fmt.Sprintf(`{"janus":"list_sessions","transaction":"e2e","admin_secret":%q}`, srv.AdminSecret())
	res, err := http.Post("http://"+srv.AdminAddr()+"/admin", "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatalf("admin list_sessions: %v", err)
	}
	defer res.Body.Close()
	var reply struct {
		Janus    string        `json:"janus"`
		Sessions []json.Number `json:"sessions"`
		Error    *struct {
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(&reply); err != nil {
		t.Fatalf("admin list_sessions: decoding reply: %v", err)
	}
	if reply.Janus != "success" {
		t.Fatalf("admin list_sessions: %s %+v", reply.Janus, reply.Error)
	}
	return reply.Sessions
}

// waitNoSessions fails the test unless the server has no session left within timeout.
func waitNoSessions(t *testing.T, srv *server.Server, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		sessions := adminSessions(t, srv)
		if len(sessions) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions still alive %v after the page stopped: %v", timeout, sessions)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stableICE has strata gather candidates on the default route's interface only (loopback where there
// is none). Tests of other packages that run beside these (the SIP lab, the network controller's)
// add and remove veth interfaces; a PeerConnection whose selected pair sat on one of them would lose
// its path when that test ends, and with it the rest of a test here.
func stableICE(cfg *config.Config) {
	if name := defaultRouteInterface(); name != "" {
		cfg.Media.ICE.Interfaces = []string{name}
		return
	}
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Media.ICE.Loopback = true
}

// defaultRouteInterface is the interface of the IPv4 default route in /proc/net/route, or "".
func defaultRouteInterface() string {
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "00000000" && f[0] != "lo" {
			return f[0]
		}
	}
	return ""
}
