package videoroom_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/transport/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
	"github.com/strata-rtc/strata/internal/server"
)

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startServer runs a complete strata on loopback (free ports) and returns a WebSocket client.
func startServer(t testing.TB, edit func(*config.Config)) *janusclient.Client {
	t.Helper()
	return startServerLogged(t, edit, testLogger())
}

// startServerLogged is startServer with the server's logger.
func startServerLogged(t testing.TB, edit func(*config.Config), log *slog.Logger) *janusclient.Client {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.HTTP.Demos = false
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Enabled = false
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
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
	return c
}

// attach creates a session and attaches a videoroom handle.
func attach(t testing.TB, c *janusclient.Client) *janusclient.Handle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Attach(ctx, videoroom.Package)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// request sends a message and decodes the plugin data; plugin errors come back as error.
func request(t testing.TB, h *janusclient.Handle, body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP, error) {
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

func mustRequest(t testing.TB, h *janusclient.Handle, body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP) {
	t.Helper()
	data, j, err := request(t, h, body, jsep)
	if err != nil {
		t.Fatalf("%v: %v", body["request"], err)
	}
	return data, j
}

func wantCode(t testing.TB, err error, code int) {
	t.Helper()
	if got := janusclient.Code(err); got != code {
		t.Fatalf("error %v (code %d), want code %d", err, got, code)
	}
}

// clientAPI is a browser-like Pion API on loopback; with shaper set, everything the client
// receives goes through it.
func clientAPI(t testing.TB, shaper *linkShaper) *webrtc.API {
	t.Helper()
	return clientAPIWith(t, shaper, clientOptions{})
}

// clientOptions adjust clientAPIWith.
type clientOptions struct {
	// innermost interceptors come first in the chain: they see what the default interceptors
	// send, NACK retransmissions included.
	innermost []interceptor.Factory
	// noReplayProtection lets duplicated packets reach the application.
	noReplayProtection bool
}

func clientAPIWith(t testing.TB, shaper *linkShaper, o clientOptions) *webrtc.API {
	t.Helper()
	var se webrtc.SettingEngine
	se.DisableSRTPReplayProtection(o.noReplayProtection)
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	if shaper != nil {
		n, err := shaper.net()
		if err != nil {
			t.Fatal(err)
		}
		se.SetNet(n)
	}
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	reg := &interceptor.Registry{}
	for _, f := range o.innermost {
		reg.Add(f)
	}
	if err := webrtc.RegisterDefaultInterceptors(me, reg); err != nil {
		t.Fatal(err)
	}
	if err := webrtc.ConfigureTWCCHeaderExtensionSender(me, reg); err != nil {
		t.Fatal(err)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
}

// completeLocal sets a local description and waits for gathering (strata's peers are half-trickle).
func completeLocal(t testing.TB, pc *webrtc.PeerConnection, desc webrtc.SessionDescription) *janusclient.JSEP {
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

var _ transport.Net // the shaper implements it (shaper_test.go)

func codeOf(err error) int { return janusclient.Code(err) }

// waitEvent waits for an unsolicited plugin event on h that satisfies ok.
func waitEvent(t testing.TB, h *janusclient.Handle, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
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
