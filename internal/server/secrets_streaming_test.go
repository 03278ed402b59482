package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// TestStreamingMountpointSecrets: the streaming samples of the reference configuration (Janus's,
// whose secret is the published "adminpwd") have an empty secret and get a random one at every
// start, written once to the log; a configured secret is kept, and a disabled plugin is left alone.
func TestStreamingMountpointSecrets(t *testing.T) {
	cfg := config.Default()
	var ids []uint64
	for _, m := range cfg.Plugins.Streaming.Mountpoints {
		if m.Secret != "" {
			t.Fatalf("reference mountpoint %d has secret %q", m.ID, m.Secret)
		}
		ids = append(ids, m.ID)
	}
	if len(ids) != 4 || ids[0] != 1 || ids[1] != 123 || ids[2] != 2 || ids[3] != 3 {
		t.Fatalf("reference mountpoints %v: want Janus's samples 1, 123, 2, 3", ids)
	}
	cfg.Plugins.Streaming.Enabled = false
	if s := withGeneratedSecrets(cfg, slog.New(slog.DiscardHandler)).Plugins.Streaming.Mountpoints[0].Secret; s != "" {
		t.Fatalf("disabled streaming: secret %q generated", s)
	}
	cfg.Plugins.Streaming.Enabled = true
	cfg.Plugins.Streaming.Mountpoints = append(cfg.Plugins.Streaming.Mountpoints, config.StreamingMountpoint{Type: "rtp", ID: 9, Secret: "mine"})
	var logs bytes.Buffer
	a := withGeneratedSecrets(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	got := a.Plugins.Streaming.Mountpoints
	if len(got[0].Secret) < 20 || got[0].Secret == got[1].Secret {
		t.Fatalf("sample secrets %q, %q: want long random ones", got[0].Secret, got[1].Secret)
	}
	if strings.Count(logs.String(), got[0].Secret) != 1 || !strings.Contains(logs.String(), "streaming mountpoint secret generated") {
		t.Fatalf("the generated secret is not written once to the log:\n%s", logs.String())
	}
	if got[4].Secret != "mine" || cfg.Plugins.Streaming.Mountpoints[0].Secret != "" {
		t.Fatal("a configured secret was replaced, or the given configuration changed")
	}
}
