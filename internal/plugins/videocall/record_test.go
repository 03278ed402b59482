package videocall_test

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/videocall"
	"github.com/strata-rtc/strata/internal/record"
)

// `set` with record writes what that user sends, one .mjr per kind, until record:false; a
// filename outside the recordings directory is refused.
func TestRecordingOneSideOfACall(t *testing.T) {
	dir := t.TempDir()
	c := janustest.StartServer(t, func(cfg *config.Config) { cfg.Plugins.VideoCall.RecordingsDir = dir }, janustest.Logger())
	alice, bob := newUser(t, c, "alice"), newUser(t, c, "bob")
	connect(t, alice, bob)
	bob.received(20, 20*time.Second)
	_, _, err := alice.request(map[string]any{"request": "set", "record": true, "filename": "../escape"}, nil)
	janustest.WantCode(t, err, videocall.ErrInvalidElement)
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("filename outside: %v", err)
	}
	alice.must(map[string]any{"request": "set", "record": true, "filename": "calls/alice"}, nil)
	bob.received(100, 20*time.Second)
	alice.must(map[string]any{"request": "set", "record": false}, nil)
	for _, kind := range []string{"audio", "video"} {
		n := countFrames(t, filepath.Join(dir, "calls", "alice-"+kind+".mjr"))
		if n < 50 {
			t.Fatalf("alice-%s.mjr has %d packets, want at least 50", kind, n)
		}
		t.Logf("alice-%s.mjr: %d packets", kind, n)
	}
}

func countFrames(t *testing.T, path string) int {
	t.Helper()
	r, err := record.OpenMJR(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: %v", path, err)
			}
			return n
		}
		n++
	}
}
