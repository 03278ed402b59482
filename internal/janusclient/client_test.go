package janusclient_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/server"
)

// startServer runs a real strata on free loopback ports; the client is tested against it, not a fake.
func startServer(t *testing.T, edit func(*config.Config)) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Enabled = false
	cfg.Plugins.Streaming.FreePorts()
	if edit != nil {
		edit(cfg)
	}
	s, err := server.New(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func urls(s *server.Server) map[string]string {
	return map[string]string{"http": "http://" + s.HTTPAddr() + "/janus", "ws": "ws://" + s.WSAddr()}
}

func TestRequestsAndErrorsOverBothTransports(t *testing.T) {
	srv := startServer(t, nil)
	for name, url := range urls(srv) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := janusclient.Dial(ctx, url, janusclient.WithKeepalive(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("ping: %v", err)
			}
			s, err := c.Create(ctx)
			if err != nil || s.ID == 0 {
				t.Fatalf("create: %v", err)
			}
			time.Sleep(200 * time.Millisecond) // a few keepalives go out meanwhile, all acked
			h, err := s.AttachOpaque(ctx, "janus.plugin.echotest", "client-test")
			if err != nil || h.ID == 0 {
				t.Fatalf("attach: %v", err)
			}
			// An asynchronous plugin request: ack, then the event with the transaction.
			ev, err := h.Message(ctx, map[string]any{"bitrate": 100000}, nil)
			if err != nil || ev.Janus != "event" || ev.Transaction == "" {
				t.Fatalf("message: %v %+v", err, ev)
			}
			// A plugin error is a *PluginError with its code, the event still returned.
			ev, err = h.Message(ctx, map[string]any{"substream": 7}, nil)
			var pe *janusclient.PluginError
			if !asPluginError(err, &pe) || pe.Code != 413 || pe.Plugin != "janus.plugin.echotest" || ev == nil {
				t.Fatalf("plugin error: %v %+v", err, ev)
			}
			// Trickle is acknowledged (the candidate waits for an offer).
			mid := "0"
			if err := h.Trickle(ctx, janusclient.Candidate{Candidate: "candidate:1 1 udp 1 127.0.0.1 9 typ host", SDPMid: &mid}); err != nil {
				t.Errorf("trickle: %v", err)
			}
			if err := h.Detach(ctx); err != nil {
				t.Fatal(err)
			}
			for range h.Events() { // closes after `detached`
			}
			// A core error carries the Janus code.
			if err := h.Hangup(ctx); janusclient.Code(err) != 459 {
				t.Errorf("hangup on a detached handle: %v, want 459", err)
			}
			if err := s.Destroy(ctx); err != nil {
				t.Fatal(err)
			}
			if _, ok := <-s.Events(); ok {
				t.Error("session events still open after destroy")
			}
			if c.Dropped() != 0 {
				t.Errorf("%d events dropped", c.Dropped())
			}
		})
	}
}

func asPluginError(err error, target **janusclient.PluginError) bool {
	pe, ok := err.(*janusclient.PluginError)
	if ok {
		*target = pe
	}
	return ok
}

// TestSessionTimeoutArrivesAsEvent: without keepalives a WebSocket session times out, and the client
// delivers `timeout` on the session's Events and then closes it. (Over HTTP the long-poll itself
// keeps a session alive, as in Janus.)
func TestSessionTimeoutArrivesAsEvent(t *testing.T) {
	srv := startServer(t, func(c *config.Config) { c.General.SessionTimeout = time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "ws://"+srv.WSAddr(), janusclient.WithKeepalive(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-s.Events():
		if ev == nil || ev.Janus != "timeout" || ev.SessionID != s.ID {
			t.Fatalf("first session event %+v, want timeout", ev)
		}
	case <-ctx.Done():
		t.Fatal("no timeout event")
	}
	select {
	case _, ok := <-s.Events():
		if ok {
			t.Error("events after timeout")
		}
	case <-time.After(2 * time.Second):
		t.Error("session events not closed after timeout")
	}
}

func TestDialRejectsUnknownSchemesAndDeadServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := janusclient.Dial(ctx, "ftp://127.0.0.1/janus"); err == nil {
		t.Error("ftp:// accepted")
	}
	if _, err := janusclient.Dial(ctx, "ws://127.0.0.1:1"); err == nil {
		t.Error("dial to a closed port succeeded")
	}
}
