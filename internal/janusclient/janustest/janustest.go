// Package janustest runs a complete strata on loopback for a plugin's tests and drives it through
// the Janus API with janusclient: start a server, attach, send requests, wait for events, and
// complete a Pion PeerConnection's local description the way strata's half-trickle peers expect.
package janustest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/server"
	"github.com/strata-rtc/strata/internal/transport/wsapi"
)

// Logger is the server's logger in tests: silent unless STRATA_TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// StartServer runs a complete strata on loopback (free ports, the sample mountpoints' too; ICE on
// lo) with edit applied to its configuration, stopped when the test ends, and returns a WebSocket client.
func StartServer(t testing.TB, edit func(*config.Config), log *slog.Logger) *janusclient.Client {
	t.Helper()
	_, c := Start(t, edit, log)
	return c
}

// Start is StartServer that also returns the server (its listeners' addresses). The HTTP listener
// is on, the demos off.
func Start(t testing.TB, edit func(*config.Config), log *slog.Logger) (*server.Server, *janusclient.Client) {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.HTTP.Demos = false
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Enabled = false
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Plugins.Streaming.FreePorts() // the sample mountpoints' fixed ports would collide with other servers
	if edit != nil {
		edit(cfg)
	}
	srv, err := server.New(cfg, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "ws://"+srv.WSAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

// StartPlugin runs one plugin behind a gateway and a WebSocket Janus API on loopback (ICE on lo),
// without the rest of a server: for tests that wire the plugin themselves (a cluster node's, say).
// edit (if not nil) changes the configuration first; newPlugin makes the plugin with the
// configuration and the gateway's peer factory. All is stopped when the test ends, the plugin's
// side before whatever the test set up earlier; it returns a WebSocket client.
func StartPlugin(t testing.TB, edit func(*config.Config), log *slog.Logger,
	newPlugin func(*config.Config, *peer.Factory) plugin.Plugin) *janusclient.Client {
	t.Helper()
	cfg := config.Default()
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	if edit != nil {
		edit(cfg)
	}
	ccOpts, err := bwe.PeerOptions(cfg.Media, nil)
	if err != nil {
		t.Fatal(err)
	}
	peers, err := peer.NewFactory(cfg.Media, log, ccOpts...)
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.New(cfg, peers, []plugin.Plugin{newPlugin(cfg, peers)}, log, nil)
	ws := wsapi.New(gw, cfg)
	api := httptest.NewServer(ws)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "ws://"+api.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		gw.Close()
		ws.Close()
		api.Close()
		peers.Close()
	})
	return c
}

// Attach creates a session and attaches a handle of plugin pkg.
func Attach(t testing.TB, c *janusclient.Client, pkg string) *janusclient.Handle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Attach(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Request sends a message and decodes the plugin data; plugin errors come back as error.
func Request(t testing.TB, h *janusclient.Handle, body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := h.Message(ctx, body, jsep)
	if err != nil {
		return nil, nil, err
	}
	var data map[string]any
	if ev.PluginData != nil {
		if err := json.Unmarshal(ev.PluginData.Data, &data); err != nil {
			t.Fatal(err)
		}
	}
	return data, ev.JSEP, nil
}

// MustRequest is Request failing the test on an error.
func MustRequest(t testing.TB, h *janusclient.Handle, body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP) {
	t.Helper()
	data, j, err := Request(t, h, body, jsep)
	if err != nil {
		t.Fatalf("%v: %v", body["request"], err)
	}
	return data, j
}

// WantCode fails the test unless err carries the Janus error code.
func WantCode(t testing.TB, err error, code int) {
	t.Helper()
	if got := janusclient.Code(err); got != code {
		t.Fatalf("error %v (code %d), want code %d", err, got, code)
	}
}

// WaitEvent waits up to within for an unsolicited plugin event on h that satisfies ok.
func WaitEvent(t testing.TB, h *janusclient.Handle, within time.Duration, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, open := <-h.Events():
			if !open {
				t.Fatal("handle events closed")
			}
			if ev.PluginData == nil {
				continue
			}
			var d map[string]any
			if json.Unmarshal(ev.PluginData.Data, &d) == nil && ok(d) {
				return d
			}
		case <-deadline:
			t.Fatal("expected event did not arrive")
			return nil
		}
	}
}

// CompleteLocal sets a local description and waits for candidate gathering, since strata's peers
// are half-trickle, and returns it as a JSEP.
func CompleteLocal(t testing.TB, pc *webrtc.PeerConnection, desc webrtc.SessionDescription) *janusclient.JSEP {
	t.Helper()
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(desc); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-time.After(10 * time.Second):
		t.Fatal("candidate gathering did not complete")
	}
	ld := pc.LocalDescription()
	return &janusclient.JSEP{Type: ld.Type.String(), SDP: ld.SDP}
}
