package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/client"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

const topology = `name: exp1
nodes: [london, {name: paris, enforcer: true}, madrid]
links:
  - {from: london, to: paris, capacity: 100Mbps, duplex: true}
  - {name: pm, from: paris, to: madrid, capacity: 10Mbps, delay: 6ms, duplex: true}
`

var layers = []api.Layer{{RateBps: 600_000}, {RateBps: 600_000}, {RateBps: 1_200_000}}

// startController runs a real controller over HTTP on loopback.
func startController(t *testing.T) (*httptest.Server, *netctl.Controller) {
	t.Helper()
	top, err := topo.Parse("exp1.yaml", []byte(topology))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := netctl.New(top, netctl.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv := netctl.NewServer(ctl, netctl.WithHeartbeat(100*time.Millisecond))
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return ts, ctl
}

func newClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(url, client.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// next returns the next event of a watch, failing after 5 s.
func next(t *testing.T, w *client.Watch) client.Event {
	t.Helper()
	select {
	case e, ok := <-w.Events():
		if !ok {
			t.Fatal("watch ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return client.Event{}
}

// waitFor skips events until one matches.
func waitFor(t *testing.T, w *client.Watch, match func(client.Event) bool) client.Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e, ok := <-w.Events():
			if !ok {
				t.Fatal("watch ended")
			}
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatal("no matching event within 5 s")
		}
	}
}

func TestClientRegistersAndReceivesDecisionsAfterCapacityChange(t *testing.T) {
	ts, _ := startController(t)
	c := newClient(t, ts.URL)
	ctx := context.Background()
	if err := c.PutStream(ctx, api.Stream{ID: "cam", Source: "paris", Layers: layers}); err != nil {
		t.Fatal(err)
	}
	res, err := c.PutSubscription(ctx, api.Subscription{ID: "sub", Stream: "cam", Receiver: "madrid"})
	if err != nil || res.Decision.Layers != 3 {
		t.Fatalf("subscription: %+v %v, want 3 layers on 10 Mbit/s", res, err)
	}
	w := c.Watch(ctx, client.WatchConfig{})
	defer w.Close()
	if e := next(t, w); e.Type != client.Connected {
		t.Fatalf("first event %v, want connected", e.Type)
	}
	if e := next(t, w); e.Type != client.Snapshot || len(e.Snapshot.Decisions) != 1 || e.Snapshot.Decisions[0].Layers != 3 {
		t.Fatalf("second event %+v, want a snapshot with 3 layers", e)
	}
	// The link drops to 1.5 Mbit/s: three layers (2.4) no longer fit, two (1.2) do.
	if _, err := c.SetLinkCapacity(ctx, "pm", 1500*cc.Kbps); err != nil {
		t.Fatal(err)
	}
	e := next(t, w)
	if e.Type != client.Decision || e.Decision.Subscription != "sub" || e.Decision.Layers != 2 {
		t.Fatalf("after the capacity change: %+v, want sub at 2 layers", e)
	}
	if _, err := c.SetLinkCapacity(ctx, "pm", 1*cc.Mbps); err != nil {
		t.Fatal(err)
	}
	if e := next(t, w); e.Type != client.Decision || e.Decision.Layers != 1 {
		t.Fatalf("at 1 Mbit/s: %+v, want 1 layer", e)
	}
	if err := c.SetLayers(ctx, "cam", []api.Layer{{RateBps: 300_000}, {RateBps: 300_000}, {RateBps: 300_000}}); err != nil {
		t.Fatal(err)
	}
	ds, err := c.Decisions(ctx)
	if err != nil || len(ds.Decisions) != 1 || ds.Decisions[0].Pending == 0 {
		t.Fatalf("decisions %+v %v: cheaper layers should start an upgrade", ds, err)
	}
	if err := c.DeleteSubscription(ctx, "sub"); err != nil {
		t.Fatal(err)
	}
	if e := next(t, w); e.Type != client.Removed || e.Removed != "sub" {
		t.Fatalf("after delete: %+v", e)
	}
	if err := c.DeleteStream(ctx, "cam"); err != nil {
		t.Fatal(err)
	}
	rules, err := c.Rules(ctx, "paris")
	if err != nil || len(rules.Rules) != 0 {
		t.Fatalf("rules after everything was deleted: %+v %v", rules, err)
	}
}

func TestClientAPIErrors(t *testing.T) {
	ts, _ := startController(t)
	c := newClient(t, ts.URL)
	err := c.PutStream(context.Background(), api.Stream{ID: "cam", Source: "rome", Layers: layers})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != api.CodeUnknownNode {
		t.Fatalf("got %v, want an APIError unknown_node", err)
	}
	if errors.Is(err, client.ErrUnreachable) {
		t.Fatal("a refused request is not an unreachable controller")
	}
	if _, err := client.New("ftp://x"); err == nil {
		t.Fatal("non-HTTP URL accepted")
	}
}

func TestClientUnreachable(t *testing.T) {
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	c := newClient(t, url)
	ctx := context.Background()
	if _, err := c.Health(ctx); !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("closed port: %v, want ErrUnreachable", err)
	}
	if err := c.PutStream(ctx, api.Stream{ID: "x", Source: "paris", Layers: layers}); !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("closed port: %v, want ErrUnreachable", err)
	}
	w := c.Watch(ctx, client.WatchConfig{MinBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	defer w.Close()
	if e := next(t, w); e.Type != client.Disconnected || !errors.Is(e.Err, client.ErrUnreachable) {
		t.Fatalf("watch of a closed port: %+v", e)
	}
	// A proxy in front of a dead controller.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer proxy.Close()
	if _, err := newClient(t, proxy.URL).Decisions(ctx); !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("502: %v, want ErrUnreachable", err)
	}
	// A caller's own cancellation is not the controller's fault.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Health(cctx); err == nil || errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("cancelled: %v, want a plain context error", err)
	}
}

func TestWatchReconnects(t *testing.T) {
	ts, _ := startController(t)
	c := newClient(t, ts.URL)
	ctx := context.Background()
	if err := c.PutStream(ctx, api.Stream{ID: "cam", Source: "paris", Layers: layers}); err != nil {
		t.Fatal(err)
	}
	w := c.Watch(ctx, client.WatchConfig{MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	defer w.Close()
	waitFor(t, w, func(e client.Event) bool { return e.Type == client.Snapshot })
	ts.CloseClientConnections()
	if e := next(t, w); e.Type != client.Disconnected || !errors.Is(e.Err, client.ErrUnreachable) {
		t.Fatalf("after the connection dropped: %+v", e)
	}
	// While disconnected a subscription appears; the next snapshot has it.
	if _, err := c.PutSubscription(ctx, api.Subscription{ID: "sub", Stream: "cam", Receiver: "madrid"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, func(e client.Event) bool { return e.Type == client.Connected })
	e := next(t, w)
	if e.Type != client.Snapshot || len(e.Snapshot.Decisions) != 1 || e.Snapshot.Decisions[0].Subscription != "sub" {
		t.Fatalf("after reconnecting: %+v, want a snapshot with sub", e)
	}
}

func TestWatchIdleTimeout(t *testing.T) {
	// A server that opens the stream and then says nothing, not even heartbeats.
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer hung.Close()
	defer hung.CloseClientConnections()
	w := newClient(t, hung.URL).Watch(context.Background(), client.WatchConfig{IdleTimeout: 200 * time.Millisecond, MinBackoff: 50 * time.Millisecond})
	defer w.Close()
	start := time.Now()
	e := next(t, w)
	if e.Type != client.Disconnected || !errors.Is(e.Err, client.ErrUnreachable) {
		t.Fatalf("silent stream: %+v", e)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("idle stream noticed after %v", time.Since(start))
	}
}
