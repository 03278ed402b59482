// Package loadtest starts a complete strata in-process for the load generator's tests: the Janus
// API on free loopback ports and ICE on loopback, so real Pion clients can reach it.
package loadtest

import (
	"log/slog"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/server"
)

// StartStrata runs strata until the test ends and returns its HTTP and WebSocket API URLs.
func StartStrata(t testing.TB) (httpURL, wsURL string) {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.HTTP.Demos = false
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Enabled = false
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	// The streaming plugin's sample mountpoints listen on fixed ports that other tests on the
	// machine may hold; the load tests create their own on ports the plugin picks.
	cfg.Plugins.Streaming.Mountpoints = nil
	// The SIP plugin's signalling and RTP on loopback, where the tests' echo service (sipp) runs.
	cfg.Plugins.SIP.LocalIP = "127.0.0.1"
	s, err := server.New(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return "http://" + s.HTTPAddr() + "/janus", "ws://" + s.WSAddr()
}
