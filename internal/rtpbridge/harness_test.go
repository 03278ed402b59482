package rtpbridge

import (
	"log/slog"
	"os"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
)

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func testFactory(t testing.TB) *peer.Factory {
	t.Helper()
	m := config.Default().Media
	m.ICE.Loopback = true
	m.ICE.Interfaces = []string{"lo"}
	f, err := peer.NewFactory(m, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

var loopback = Config{LocalIP: "127.0.0.1"}

// newBridge is a strata handle's PeerConnection with a bridge on it.
func newBridge(t *testing.T, f *peer.Factory, cfg Config, opts Options) *Session {
	t.Helper()
	p, err := f.New(peer.Hooks{}, peer.WithBridgeCodecs())
	if err != nil {
		t.Fatal(err)
	}
	opts.Log = testLogger()
	s, err := New(cfg, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		p.Close("test over")
	})
	return s
}
