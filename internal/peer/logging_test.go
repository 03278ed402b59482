package peer

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/logagg"
)

// TestPionWarningsFromRemoteInputAreAggregated: a warning per candidate of a 10,000-candidate
// trickle is one line and one summary; distinct scopes and formats stay apart, and Pion's info
// (strata's debug) is not aggregated.
func TestPionWarningsFromRemoteInputAreAggregated(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	clock := logagg.NewManualClock()
	f := newAggregatingFactory(log, 5*time.Second, clock)
	ice, pc := f.NewLogger("ice"), f.NewLogger("pc")
	for i := range 10000 {
		ice.Warnf("Failed to send STUN message to %s: %v", fmt.Sprintf("10.0.%d.%d:9", i/256, i%256), "unreachable")
		ice.Infof("Adding remote candidate %d", i)
	}
	pc.Warnf("Failed to send STUN message to %s: %v", "10.0.0.1:9", "unreachable")
	ice.Errorf("Failed to send STUN message to %s: %v", "10.0.0.1:9", "unreachable")
	clock.Advance(5 * time.Second)

	var warnings []string
	debug := 0
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.HasPrefix(l, "level=DEBUG") {
			debug++
		} else {
			warnings = append(warnings, l)
		}
	}
	want := []string{
		`level=WARN msg="Failed to send STUN message to 10.0.0.0:9: unreachable" pion=ice`,
		`level=WARN msg="Failed to send STUN message to 10.0.0.1:9: unreachable" pion=pc`,
		`level=ERROR msg="Failed to send STUN message to 10.0.0.1:9: unreachable" pion=ice`,
		`level=WARN msg="Failed to send STUN message to %s: %v [repeated 9999 times in 5s]" pion=ice repeated=9999`,
	}
	if debug != 10000 || strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%d debug lines; warnings:\n%s\nwant\n%s", debug, strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}
