package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/netctl"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// dashTopology is the smallest network a controller takes: this SFU and one receiver.
const dashTopology = `name: dashboard-test
nodes:
  - {name: sfu, role: sfu, enforcer: true}
  - {name: viewer, role: receiver}
links:
  - {name: sfu-viewer, from: sfu, to: viewer, capacity: 100Mbps, delay: 1ms, duplex: true}
`

// startDashController serves a network controller on loopback until the test ends.
func startDashController(t *testing.T) string {
	t.Helper()
	top, err := topo.Parse("dashboard-test.yaml", []byte(dashTopology))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := netctl.New(top, netctl.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := netctl.NewServer(ctl, netctl.WithLogger(slog.New(slog.DiscardHandler)))
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	hs.RegisterOnShutdown(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = hs.Serve(ln) }()
	go srv.Run(ctx, 100*time.Millisecond)
	t.Cleanup(func() {
		cancel()
		sctx, done := context.WithTimeout(context.Background(), 3*time.Second)
		defer done()
		_ = hs.Shutdown(sctx)
	})
	return "http://" + ln.Addr().String()
}

// TestDashboardShowsTheNetworkController: with plugins.videoroom.netctl set, the snapshot carries
// the videoroom's view of its controller, connected once the decision stream is up.
func TestDashboardShowsTheNetworkController(t *testing.T) {
	url := startDashController(t)
	cfg := testConfig(t)
	cfg.Plugins.VideoRoom.NetCtl = config.VideoRoomNetCtl{URL: url, Node: "sfu", Receiver: "viewer", Interval: 200 * time.Millisecond}
	srv := startServer(t, cfg)
	var last any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		last = dashboardSnapshot(t, srv).Netctl
		if v, ok := last.(map[string]any); ok && v["url"] == url && v["node"] == "sfu" && v["connected"] == true {
			return
		}
	}
	t.Fatalf("netctl view %v, want the controller at %s, connected", last, url)
}

// TestDashboardOff: transports.admin.dashboard false removes the page and its data.
func TestDashboardOff(t *testing.T) {
	cfg := testConfig(t)
	cfg.Transports.Admin.Dashboard = false
	srv := startServer(t, cfg)
	for _, path := range []string{"/dashboard", "/dashboard/data"} {
		if code, _, _ := getDashboard(t, srv, path, "Bearer "+testAdminSecret); code != http.StatusNotFound {
			t.Errorf("GET %s with the dashboard off: %d, want 404", path, code)
		}
	}
}
