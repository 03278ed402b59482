package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// Both transports hand the client's address to the gateway, so sessions_per_address counts a
// client's sessions over HTTP and WebSocket together.
func TestSessionsPerAddressOverBothTransports(t *testing.T) {
	cfg := testConfig(t)
	cfg.Transports.Admin.Enabled = false
	cfg.General.Limits.SessionsPerAddress = 2
	cfg.General.Limits.UnlimitedAddresses = nil // the test client is on loopback
	s := startServer(t, cfg)
	api := "http://" + s.HTTPAddr() + "/janus"
	first := post(t, api, `{"janus":"create","transaction":"c"}`)
	if first["janus"] != "success" {
		t.Fatalf("create over HTTP: %v", first)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, err := janusclient.Dial(ctx, "ws://"+s.WSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := ws.Create(ctx); err != nil {
		t.Fatalf("create over WebSocket: %v", err)
	}
	refused := post(t, api, `{"janus":"create","transaction":"c"}`)
	if e, _ := refused["error"].(map[string]any); e == nil || e["code"] != 472.0 || !strings.Contains(fmt.Sprint(e["reason"]), "sessions_per_address") {
		t.Fatalf("third session from one address over HTTP: %v, want 472 naming sessions_per_address", refused)
	}
	if _, err := ws.Create(ctx); janusclient.Code(err) != 472 {
		t.Fatalf("third session from one address over WebSocket: %v, want 472", err)
	}
	id := first["data"].(map[string]any)["id"].(float64)
	if m := post(t, fmt.Sprintf("%s/%d", api, uint64(id)), `{"janus":"destroy","transaction":"d"}`); m["janus"] != "success" {
		t.Fatalf("destroy: %v", m)
	}
	if _, err := ws.Create(ctx); err != nil {
		t.Fatalf("create after a session of the address was destroyed: %v", err)
	}
}
