package config

import (
	"strings"
	"testing"
	"time"
)

// TestSafeDefaults: with no file, the admin API listens on loopback only, with no secret of its own
// (strata generates one at start) and no CORS; no configured secret is a shared constant; the secure
// listeners are off, on Janus's secure ports; every listener has read timeouts.
func TestSafeDefaults(t *testing.T) {
	c := Default()
	a := c.Transports.Admin
	if !a.Enabled || a.Listen != "127.0.0.1:7088" || !IsLoopback(a.Listen) {
		t.Errorf("admin: enabled %v on %q, want on, loopback only", a.Enabled, a.Listen)
	}
	if a.AdminSecret != "" || a.CORSOrigin != "" {
		t.Errorf("admin_secret %q, cors_origin %q: want both empty (a generated secret, no CORS)", a.AdminSecret, a.CORSOrigin)
	}
	for _, r := range c.Plugins.VideoRoom.Rooms {
		if r.Secret != "" {
			t.Errorf("sample room %d has the fixed secret %q, want \"\" (generated at start)", r.ID, r.Secret)
		}
	}
	if ws := a.WebSocket; ws.Enabled || ws.Listen != "127.0.0.1:7188" {
		t.Errorf("admin websocket: enabled %v on %q, want off (as Janus's admin_ws) on 127.0.0.1:7188", ws.Enabled, ws.Listen)
	}
	secure := map[string]TLSListener{"http.https": c.Transports.HTTP.HTTPS, "websocket.wss": c.Transports.WebSocket.WSS, "admin.https": a.HTTPS,
		"admin.websocket.wss": a.WebSocket.WSS}
	ports := map[string]string{"http.https": ":8089", "websocket.wss": ":8989", "admin.https": "127.0.0.1:7889", "admin.websocket.wss": "127.0.0.1:7989"}
	for name, l := range secure {
		if l.Enabled || l.Listen != ports[name] {
			t.Errorf("%s: enabled %v on %q, want off on %q", name, l.Enabled, l.Listen, ports[name])
		}
	}
	to := c.Transports.Timeouts
	if to.ReadHeader != 10*time.Second || to.Read != 30*time.Second || to.Idle != 120*time.Second {
		t.Errorf("timeouts %+v, want read_header 10s, read 30s, idle 120s", to)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7088": true, "127.1.2.3:1": true, "[::1]:7088": true, "localhost:7088": true, "LOCALHOST:1": true,
		":7088": false, "0.0.0.0:7088": false, "[::]:7088": false, "10.0.0.2:7088": false, "example.org:7088": false,
		"[fe80::1%eth0]:1": false, "7088": false, "": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestSampleSecretsRefusedBeyondLoopback: each of Janus's published sample secrets is refused where
// it would protect a listener other machines can reach, and accepted on loopback (tests and the
// machine's own tools may use them there).
func TestSampleSecretsRefusedBeyondLoopback(t *testing.T) {
	cases := []struct {
		name, exposed, loopback, option string
	}{
		{"admin secret on every interface",
			"transports:\n  admin:\n    listen: \":7088\"\n    admin_secret: janusoverlord\n",
			"transports:\n  admin:\n    listen: \"127.0.0.1:7088\"\n    admin_secret: janusoverlord\n",
			"transports.admin.admin_secret"},
		{"admin secret on a public address over https",
			"transports:\n  admin:\n    enabled: false\n    admin_secret: JanusOverlord\n    https: {enabled: true, listen: \"10.0.0.2:7889\", self_signed: true}\n",
			"transports:\n  admin:\n    enabled: false\n    admin_secret: JanusOverlord\n    https: {enabled: true, listen: \"[::1]:7889\", self_signed: true}\n",
			"transports.admin.admin_secret"},
		{"admin secret on every interface over the admin WebSocket",
			"transports:\n  admin:\n    enabled: false\n    admin_secret: janusoverlord\n    websocket: {enabled: true, listen: \":7188\"}\n",
			"transports:\n  admin:\n    enabled: false\n    admin_secret: janusoverlord\n    websocket: {enabled: true}\n",
			"transports.admin.websocket.listen"},
		{"admin secret on the admin wss",
			"transports:\n  admin:\n    enabled: false\n    admin_secret: janusoverlord\n    websocket: {wss: {enabled: true, listen: \"0.0.0.0:7989\", self_signed: true}}\n",
			"transports:\n  admin:\n    enabled: false\n    admin_secret: janusoverlord\n    websocket: {wss: {enabled: true, self_signed: true}}\n",
			"transports.admin.websocket.wss.listen"},
		{"api secret",
			"general:\n  api_secret: janusrocks\n",
			"general:\n  api_secret: janusrocks\n" + apiOnLoopback,
			"general.api_secret"},
		{"token",
			"general:\n  token_auth: true\n  tokens: [mine, janus]\n",
			"general:\n  token_auth: true\n  tokens: [mine, janus]\n" + apiOnLoopback,
			"general.tokens"},
		{"videoroom admin key",
			"plugins:\n  videoroom:\n    admin_key: supersecret\n",
			"plugins:\n  videoroom:\n    admin_key: supersecret\n" + apiOnLoopback,
			"plugins.videoroom.admin_key"},
		{"room secret, over wss only",
			"transports:\n  http: {enabled: false}\n  websocket:\n    enabled: false\n    wss: {enabled: true, self_signed: true}\nplugins:\n  videoroom:\n    rooms: [{id: 7, secret: adminpwd}]\n",
			"transports:\n  http: {enabled: false}\n  websocket:\n    enabled: false\n    wss: {enabled: true, listen: \"localhost:8989\", self_signed: true}\nplugins:\n  videoroom:\n    rooms: [{id: 7, secret: adminpwd}]\n",
			"plugins.videoroom.rooms: room 7: secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.exposed), "exposed.yaml")
			if err == nil {
				t.Fatal("a sample secret on a listener beyond loopback was accepted")
			}
			if msg := err.Error(); !strings.Contains(msg, c.option) || !strings.Contains(msg, "sample secret") || !strings.Contains(msg, "exposed.yaml") {
				t.Errorf("error does not say which option holds a sample secret: %v", err)
			}
			if _, err := Parse([]byte(c.loopback), "loopback.yaml"); err != nil {
				t.Errorf("the same secret on loopback only: %v", err)
			}
		})
	}
	// An admin secret is judged by the admin listeners only: a public API does not matter to it.
	if _, err := Parse([]byte("transports:\n  admin:\n    admin_secret: janusoverlord\n"), "x.yaml"); err != nil {
		t.Errorf("sample admin secret on the loopback admin listener beside a public API: %v", err)
	}
	// Other secrets are fine anywhere.
	if _, err := Parse([]byte("general:\n  api_secret: s3cr3t-of-mine\ntransports:\n  admin:\n    listen: \":7088\"\n    admin_secret: x7-not-a-sample\n"), "x.yaml"); err != nil {
		t.Errorf("own secrets on public listeners: %v", err)
	}
}

// apiOnLoopback moves the Janus API listeners to loopback.
const apiOnLoopback = "transports:\n  http:\n    listen: \"127.0.0.1:8088\"\n  websocket:\n    listen: \"127.0.0.1:8188\"\n"

func TestSecureListenerOptions(t *testing.T) {
	bad := map[string]string{
		"no certificate":        "transports:\n  http:\n    https: {enabled: true}\n",
		"files and self-signed": "transports:\n  http:\n    https: {enabled: true, self_signed: true, cert_file: a.pem, key_file: b.pem}\n",
		"cert without key":      "transports:\n  websocket:\n    wss: {enabled: true, cert_file: a.pem}\n",
		"no address":            "transports:\n  admin:\n    https: {enabled: true, listen: \"\", self_signed: true}\n",
		"negative timeout":      "transports:\n  timeouts: {read: -1s}\n",
	}
	for name, text := range bad {
		if _, err := Parse([]byte(text), "bad.yaml"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good := "transports:\n  timeouts: {read: 0s}\n  http:\n    https: {enabled: true, cert_file: a.pem, key_file: b.pem}\n  websocket:\n    wss: {enabled: true, self_signed: true}\n"
	if _, err := Parse([]byte(good), "good.yaml"); err != nil {
		t.Errorf("valid secure listeners: %v", err)
	}
}

// The metrics are on by default, on the admin listener; an admin base_path of /metrics would hide
// them (and clash in the listener's mux), so it is refused while they are on.
func TestMetricsOption(t *testing.T) {
	c := Default()
	if !c.Transports.Admin.Metrics {
		t.Error("transports.admin.metrics is off by default, want on")
	}
	c.Transports.Admin.BasePath = "/metrics/"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "base_path /metrics") {
		t.Errorf("admin base_path /metrics with metrics on: %v, want an error", err)
	}
	c.Transports.Admin.Metrics = false
	if err := c.Validate(); err != nil {
		t.Errorf("admin base_path /metrics with metrics off: %v", err)
	}
}

// The dashboard is on by default too; an admin base_path of /dashboard is refused while it is.
func TestDashboardOption(t *testing.T) {
	c := Default()
	if !c.Transports.Admin.Dashboard {
		t.Error("transports.admin.dashboard is off by default, want on")
	}
	c.Transports.Admin.BasePath = "/dashboard"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "base_path /dashboard") {
		t.Errorf("admin base_path /dashboard with the dashboard on: %v, want an error", err)
	}
	c.Transports.Admin.Dashboard = false
	if err := c.Validate(); err != nil {
		t.Errorf("admin base_path /dashboard with the dashboard off: %v", err)
	}
}
