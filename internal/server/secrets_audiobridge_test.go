package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// TestAudioBridgeRoomSecrets: the audiobridge's rooms of the configuration get a random secret each
// at every start when the plugin is enabled (like the videoroom's), keep a configured one, and are
// left alone while the plugin is off.
func TestAudioBridgeRoomSecrets(t *testing.T) {
	cfg := config.Default()
	if rooms := cfg.Plugins.AudioBridge.Rooms; len(rooms) != 1 || rooms[0].ID != 1234 || rooms[0].Secret != "" {
		t.Fatalf("reference audiobridge rooms %+v: want the demo room 1234 with an empty secret", rooms)
	}
	cfg.Plugins.AudioBridge.Enabled = false
	off := withGeneratedSecrets(cfg, slog.New(slog.DiscardHandler))
	if s := off.Plugins.AudioBridge.Rooms[0].Secret; s != "" {
		t.Fatalf("disabled audiobridge: room secret %q generated", s)
	}

	cfg.Plugins.AudioBridge.Enabled = true
	cfg.Plugins.AudioBridge.Rooms = append(cfg.Plugins.AudioBridge.Rooms, config.AudioBridgeRoom{ID: 5, Secret: "mine"})
	var logs bytes.Buffer
	a := withGeneratedSecrets(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	b := withGeneratedSecrets(cfg, slog.New(slog.DiscardHandler))
	got := a.Plugins.AudioBridge.Rooms
	if len(got[0].Secret) < 20 || got[0].Secret == b.Plugins.AudioBridge.Rooms[0].Secret {
		t.Fatalf("room 1234 secret %q: want a long random one per start", got[0].Secret)
	}
	if strings.Count(logs.String(), got[0].Secret) != 1 || !strings.Contains(logs.String(), "audiobridge room secret generated") {
		t.Fatalf("the generated secret is not written once to the log:\n%s", logs.String())
	}
	if got[1].Secret != "mine" {
		t.Fatalf("configured secret replaced by %q", got[1].Secret)
	}
	if cfg.Plugins.AudioBridge.Rooms[0].Secret != "" {
		t.Fatal("withGeneratedSecrets changed the configuration it was given")
	}
}
