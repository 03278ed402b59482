package logagg

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func newTestLogger(clock Clock) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	text := slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
	return slog.New(NewHandler(text, slog.LevelWarn, 5*time.Second, clock)), &buf
}

func lines(buf *bytes.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

// TestHandlerAggregatesWarningsAcrossDerivedLoggers: a warning that a thousand sessions repeat is
// one line plus a summary without any one session's attributes; info and debug pass untouched.
func TestHandlerAggregatesWarningsAcrossDerivedLoggers(t *testing.T) {
	clock := NewManualClock()
	log, buf := newTestLogger(clock)
	gw := log.With("component", "gateway")
	for i := range 1000 {
		gw.With("session", i).Warn("bad request", "reason", "malformed JSON")
		gw.Debug("request", "n", i)
	}
	log.Info("listening", "transport", "http")
	log.Info("listening", "transport", "websocket")
	clock.Advance(5 * time.Second)
	got := lines(buf)
	if len(got) != 1+1000+2+1 {
		t.Fatalf("%d lines, want 1 warning, 1000 debug, 2 info, 1 summary", len(got))
	}
	if got[0] != `level=WARN msg="bad request" component=gateway session=0 reason="malformed JSON"` {
		t.Fatalf("first warning: %s", got[0])
	}
	if want := `level=WARN msg="bad request [repeated 999 times in 5s]" repeated=999`; got[len(got)-1] != want {
		t.Fatalf("summary:\n%s\nwant\n%s", got[len(got)-1], want)
	}
}

func TestHandlerKeepsDistinctMessagesAndLevels(t *testing.T) {
	clock := NewManualClock()
	log, buf := newTestLogger(clock)
	for range 3 {
		log.Warn("a")
		log.Error("a")
		log.Warn("b")
	}
	clock.Advance(5 * time.Second)
	want := []string{
		`level=WARN msg=a`, `level=ERROR msg=a`, `level=WARN msg=b`,
	}
	got := lines(buf)
	if strings.Join(got[:3], "\n") != strings.Join(want, "\n") || len(got) != 6 {
		t.Fatalf("got\n%s", buf)
	}
	for _, s := range got[3:] {
		if !strings.Contains(s, "[repeated 2 times in 5s]") {
			t.Fatalf("summary %q", s)
		}
	}
}

func TestHandlerHonoursTheInnerLevel(t *testing.T) {
	var buf bytes.Buffer
	level := new(slog.LevelVar)
	level.Set(slog.LevelError)
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}), slog.LevelWarn, 0, NewManualClock()))
	log.Warn("hidden")
	if buf.Len() != 0 || log.Enabled(t.Context(), slog.LevelWarn) {
		t.Fatalf("a warning got through an error-level handler: %s", buf.String())
	}
}
