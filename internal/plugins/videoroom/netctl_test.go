package videoroom_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/client"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// netTopology is the smallest seed 000 network: this SFU and one receiver behind a link.
const netTopology = `name: videoroom-test
nodes:
  - {name: sfu, role: sfu, enforcer: true}
  - {name: viewer, role: receiver}
links:
  - {name: sfu-viewer, from: sfu, to: viewer, capacity: 100Mbps, delay: 1ms, duplex: true}
`

// testController is a network controller serving its HTTP API on loopback.
type testController struct {
	ctl *netctl.Controller
	cli *client.Client
	url string
}

// startController serves a controller on ln (a fresh loopback port when nil) until the test ends
// or stop is called.
func startController(t *testing.T, ln net.Listener, opts ...netctl.Option) (*testController, func()) {
	t.Helper()
	top, err := topo.Parse("videoroom-test.yaml", []byte(netTopology))
	if err != nil {
		t.Fatal(err)
	}
	cfg := netctl.DefaultConfig()
	cfg.Alloc.Hold = 500 * time.Millisecond // upgrades within the test's patience
	ctl, err := netctl.New(top, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	srv := netctl.NewServer(ctl, netctl.WithLogger(testLogger()))
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	hs.RegisterOnShutdown(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = hs.Serve(ln) }()
	go srv.Run(ctx, 100*time.Millisecond)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			sctx, done := context.WithTimeout(context.Background(), 3*time.Second)
			defer done()
			_ = hs.Shutdown(sctx)
		})
	}
	t.Cleanup(stop)
	url := "http://" + ln.Addr().String()
	cli, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	return &testController{ctl: ctl, cli: cli, url: url}, stop
}

// withNetCtl points the videoroom at a controller and makes it reconcile quickly.
func withNetCtl(url string) func(*config.Config) {
	return func(c *config.Config) {
		c.Plugins.VideoRoom.NetCtl = config.VideoRoomNetCtl{URL: url, Node: "sfu", Receiver: "viewer", Interval: 200 * time.Millisecond}
	}
}

// logRecorder keeps the messages of the records logged at Info and above.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelInfo }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Level.String()+" "+r.Message)
	l.mu.Unlock()
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// count counts the messages containing s.
func (l *logRecorder) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// decisionLayers waits until the controller has exactly one subscription, and returns its
// decision's layer count.
func (c *testController) decisionLayers(t *testing.T, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if subs := c.ctl.Subscriptions(); len(subs) == 1 {
			if d, ok := c.ctl.Decision(subs[0].ID); ok {
				return d.Layers
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("controller: %d subscriptions, want 1", len(c.ctl.Subscriptions()))
	return 0
}

// TestNetworkPolicyFollowsTheController is issue 6's integration test: a room in network mode, a
// controller, a three-layer simulcast publisher and a subscriber; the layers the subscriber gets
// follow the capacity the controller is told the SFU→receiver link has.
func TestNetworkPolicyFollowsTheController(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	tc, _ := startController(t, nil)
	c := startServer(t, withNetCtl(tc.url))
	admin := attach(t, c)
	const room = 4343
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "layer_policy": "network"}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, admin, room, pub.id)
	sub := subscribe(t, c, room, pub.id, nil)
	start := time.Now()

	if d := sub.waitFrame(start, 10*time.Second, func(l int) bool { return l == 2 }); d < 0 {
		t.Fatalf("subscriber never reached the top layer (now %d)", sub.layerNow())
	}
	full := tc.decisionLayers(t, 5*time.Second)
	streams := tc.ctl.Streams()
	if len(streams) != 1 || streams[0].Source != "sfu" || len(streams[0].Layers) < 3 {
		t.Fatalf("controller streams %+v, want one from sfu with at least a rung per simulcast layer", streams)
	}
	if subs := tc.ctl.Subscriptions(); subs[0].Receiver != "viewer" || subs[0].Stream != streams[0].ID {
		t.Fatalf("controller subscription %+v, want stream %s to viewer", subs[0], streams[0].ID)
	}
	t.Logf("registered: %d rungs %+v; decision %d layers", len(streams[0].Layers), streams[0].Layers, full)

	ctx := context.Background()
	cut := time.Now()
	if _, err := tc.cli.SetLinkCapacity(ctx, "sfu-viewer", cc.Bitrate(20_000)); err != nil {
		t.Fatal(err)
	}
	down := sub.waitFrame(cut, 5*time.Second, func(l int) bool { return l == 0 })
	if down < 0 {
		t.Fatalf("subscriber still on layer %d 5 s after the link was cut to the base layer's share", sub.layerNow())
	}
	t.Logf("base layer %v after the cut", down.Round(time.Millisecond))
	time.Sleep(1500 * time.Millisecond)
	if l, n := sub.layerNow(), tc.decisionLayers(t, time.Second); l != 0 || n != 1 {
		t.Errorf("during the cut: subscriber on layer %d, controller grants %d layers; want 0 and 1", l, n)
	}

	restore := time.Now()
	if _, err := tc.cli.ResetLinkCapacity(ctx, "sfu-viewer"); err != nil {
		t.Fatal(err)
	}
	up := sub.waitFrame(restore, 8*time.Second, func(l int) bool { return l == 2 })
	if up < 0 {
		t.Fatalf("subscriber on layer %d 8 s after the link was restored, want 2", sub.layerNow())
	}
	t.Logf("top layer %v after the restore", up.Round(time.Millisecond))

	mustRequest(t, sub.h, map[string]any{"request": "leave"}, nil)
	waitFor(t, 3*time.Second, "the subscription to be deleted", func() bool { return len(tc.ctl.Subscriptions()) == 0 })
	mustRequest(t, pub.h, map[string]any{"request": "unpublish"}, nil)
	waitFor(t, 3*time.Second, "the stream to be deleted", func() bool { return len(tc.ctl.Streams()) == 0 })
}

// waitFor polls cond until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
	}
}

// TestControllerDownFallsBackToBWE: with the controller unreachable a network-mode room forwards
// media as bwe would, warns once, and registers everything once the controller appears.
func TestControllerDownFallsBackToBWE(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	t.Cleanup(func() { _ = ln.Close() })
	// The controller is down: its port drops every connection until it starts below. The port
	// stays this test's (a port closed and bound again later can be taken meanwhile by any
	// process on the machine).
	controllerUp := dropConnections(ln.(*net.TCPListener))
	logs := &logRecorder{}
	c := startServerLogged(t, withNetCtl("http://"+addr), slog.New(logs))
	admin := attach(t, c)
	const room = 4344
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "layer_policy": "network"}, nil)
	pub := startPublisher(t, c, room, "camera")
	waitActive(t, admin, room, pub.id)
	sub := subscribe(t, c, room, pub.id, nil)
	start := time.Now()

	if d := sub.waitFrame(start, 12*time.Second, func(l int) bool { return l == 2 }); d < 0 {
		t.Fatalf("without a controller the subscriber never reached the top layer (now %d, %d packets)", sub.layerNow(), sub.count())
	} else {
		t.Logf("top layer %v after subscribing, without a controller", d.Round(time.Millisecond))
	}
	if n := logs.count("netctl controller unreachable"); n != 1 {
		t.Errorf("%d unreachable warnings, want exactly 1 for the outage", n)
	}

	controllerUp()
	tc, _ := startController(t, ln)
	if n := tc.decisionLayers(t, 8*time.Second); n < 1 {
		t.Errorf("controller grants %d layers once back, want at least the base", n)
	}
	waitFor(t, 5*time.Second, "the recovery message", func() bool { return logs.count("reachable again") > 0 })
	if n := logs.count("reachable again"); n != 1 {
		t.Errorf("%d recovery messages, want 1", n)
	}
	before := sub.count()
	time.Sleep(500 * time.Millisecond)
	if sub.count() <= before {
		t.Error("media stopped once the controller was back")
	}
}

// dropConnections accepts and resets every connection to ln, as a host whose service is down
// refuses them, until the function it returns is called; ln then serves again.
func dropConnections(ln *net.TCPListener) (release func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return // the deadline release sets
			}
			_ = c.(*net.TCPConn).SetLinger(0) // a reset, not an orderly close
			_ = c.Close()
		}
	}()
	return func() {
		_ = ln.SetDeadline(time.Now())
		<-done
		_ = ln.SetDeadline(time.Time{})
	}
}
