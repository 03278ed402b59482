// Package emutest is what the emulator's tests share: the root check, a recorder stamped with
// the test's clock, a host in no network, the test's log as a writer, building strata, and a
// flow's link use and queuing-delay quantiles.
package emutest

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// NeedRoot fails a test that builds network namespaces unless it runs as root; under -short it
// skips it instead.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if testing.Short() {
		t.Skip("needs root for network namespaces; not run under -short")
	}
	t.Fatal("this test builds network namespaces: run it as root (or with -short to leave it out)")
}

// Clock is a run's clock started at T0.
type Clock struct{ T0 time.Time }

// Now is the time since T0.
func (c Clock) Now() time.Duration { return time.Since(c.T0) }

// Log is the test's log as a writer, a line per write.
func Log(t testing.TB) *LogWriter { return &LogWriter{t} }

// LogWriter is what Log returns.
type LogWriter struct{ t testing.TB }

func (w *LogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// BuildStrata builds cmd/strata into the test's temporary directory.
func BuildStrata(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/strata-rtc/strata/cmd/strata").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/strata: %v\n%s", err, out)
	}
	return bin
}

// NoHost is a host in no network, for flows that are built but never run: it cannot enter a
// namespace or run anything.
type NoHost struct{}

var _ endpoint.Host = NoHost{}

func (NoHost) Name() string          { return "none" }
func (NoHost) Node() string          { return "none" }
func (NoHost) Addr() netip.Addr      { return netip.MustParseAddr("10.0.0.1") }
func (NoHost) Do(func() error) error { return errors.New("a host in no network") }
func (NoHost) Command(ctx context.Context, _ string, _ ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "false")
}
