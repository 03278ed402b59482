package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// TestGeneratedSecrets: with the reference configuration the admin API and the sample rooms get
// random secrets at each start, each written once to the log; the admin API takes its secret and no
// other, and a sample room can only be edited with its own.
func TestGeneratedSecrets(t *testing.T) {
	start := func() (*Server, string) {
		cfg := config.Default()
		cfg.Transports.HTTP.Listen = "127.0.0.1:0"
		cfg.Transports.WebSocket.Enabled = false
		cfg.Transports.Admin.Listen = "127.0.0.1:0"
		cfg.Plugins.Streaming.FreePorts()
		var logs bytes.Buffer
		s, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s, logs.String()
	}
	s, logs := start()
	secret := s.AdminSecret()
	if len(secret) < 20 || strings.Count(logs, secret) != 1 || !strings.Contains(logs, "admin API secret generated") {
		t.Fatalf("admin secret %q: want a long random one written once to the log:\n%s", secret, logs)
	}
	if config.Default().Transports.Admin.AdminSecret != "" {
		t.Fatal("New changed the configuration it was given")
	}
	rooms := s.Config().Plugins.VideoRoom.Rooms
	if len(rooms) < 2 || rooms[0].Secret == "" || rooms[0].Secret == rooms[1].Secret {
		t.Fatalf("sample rooms %+v: want a secret of their own each", rooms)
	}
	for _, r := range rooms {
		if strings.Count(logs, r.Secret) != 1 {
			t.Errorf("room %d's secret is not written once to the log", r.ID)
		}
	}
	other, _ := start()
	if other.AdminSecret() == secret || other.Config().Plugins.VideoRoom.Rooms[0].Secret == rooms[0].Secret {
		t.Fatal("two starts generated the same secrets")
	}

	admin := "http://" + s.AdminAddr() + "/admin"
	if m := post(t, admin, `{"janus":"list_sessions","transaction":"a","admin_secret":"`+secret+`"}`); m["janus"] != "success" {
		t.Fatalf("admin with the generated secret: %v", m)
	}
	for _, wrong := range []string{"", "janusoverlord", other.AdminSecret()} {
		m := post(t, admin, `{"janus":"list_sessions","transaction":"a","admin_secret":"`+wrong+`"}`)
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(403) {
			t.Fatalf("admin with secret %q: %v, want 403", wrong, m)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "http://"+s.HTTPAddr()+"/janus")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Attach(ctx, videoroom.Package)
	if err != nil {
		t.Fatal(err)
	}
	room := rooms[0]
	for _, wrong := range []string{"", "adminpwd"} {
		_, err := h.Message(ctx, map[string]any{"request": "edit", "room": room.ID, "secret": wrong, "new_description": "taken"}, nil)
		if janusclient.Code(err) != videoroom.ErrUnauthorized {
			t.Fatalf("edit room %d with secret %q: %v, want error %d", room.ID, wrong, err, videoroom.ErrUnauthorized)
		}
	}
	if _, err := h.Message(ctx, map[string]any{"request": "edit", "room": room.ID, "secret": room.Secret, "new_description": "mine"}, nil); err != nil {
		t.Fatalf("edit room %d with its generated secret: %v", room.ID, err)
	}
}

// TestSampleSecretsRefused: a configuration built in code is held to the configuration's rules: a
// Janus sample secret on a listener other machines can reach stops New with an error naming it.
func TestSampleSecretsRefused(t *testing.T) {
	cases := map[string]func(*config.Config){
		"admin secret": func(c *config.Config) {
			c.Transports.Admin.Listen = "0.0.0.0:0"
			c.Transports.Admin.AdminSecret = "janusoverlord"
		},
		"room secret": func(c *config.Config) {
			c.Transports.HTTP.Listen = ":0"
			c.Plugins.VideoRoom.Rooms[0].Secret = "adminpwd"
		},
		"audiobridge room secret": func(c *config.Config) {
			c.Transports.HTTP.Listen = ":0"
			c.Plugins.AudioBridge.Rooms[0].Secret = "adminpwd"
		},
		"api secret": func(c *config.Config) {
			c.Transports.WebSocket.Listen = ":0"
			c.General.APISecret = "janusrocks"
		},
	}
	for name, mod := range cases {
		cfg := testConfig(t)
		mod(cfg)
		if _, err := New(cfg, slog.New(slog.DiscardHandler), nil); err == nil || !strings.Contains(err.Error(), "sample secret") {
			t.Errorf("%s: New: %v, want a refusal", name, err)
		}
	}
}
