package peer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pion/logging"

	"github.com/strata-rtc/strata/internal/logagg"
)

// slogFactory routes Pion's logs into strata's slog logger. Pion is chatty at info level about normal
// events (candidates, state changes), so its info becomes debug; its warnings and errors stay, but
// what remote input can repeat at will (a warning per bad candidate of a 10,000-candidate trickle)
// is written once per window and scope, level and format, then summarised with a count.
type slogFactory struct {
	log *slog.Logger
	agg *logagg.Aggregator[pionKey, *slog.Logger]
}

// pionKey identifies a repeated Pion line. The format, not the formatted text, so that lines that
// differ only in the remote address are one line, and a held-back line is never formatted.
type pionKey struct {
	scope  string
	level  slog.Level
	format string
}

// pionOverflow collects lines beyond the aggregator's bound on distinct lines.
var pionOverflow = pionKey{scope: "pion", level: slog.LevelWarn, format: "further repeated Pion log lines held back"}

// PionLogs routes Pion's logs into log as every PeerConnection of a Factory does (for the Pion
// objects built outside one: the cluster relay's links).
func PionLogs(log *slog.Logger) logging.LoggerFactory { return newLoggerFactory(log) }

func newLoggerFactory(log *slog.Logger) logging.LoggerFactory {
	return newAggregatingFactory(log, logagg.DefaultWindow, nil)
}

func newAggregatingFactory(log *slog.Logger, window time.Duration, clock logagg.Clock) slogFactory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := slogFactory{log: log}
	f.agg = logagg.New(window, clock, pionOverflow, func(k pionKey, l *slog.Logger, n int, w time.Duration) {
		l.Log(context.Background(), k.level, logagg.Repeated(k.format, n, w), "repeated", n)
	})
	return f
}

func (f slogFactory) NewLogger(scope string) logging.LeveledLogger {
	return slogLogger{log: f.log.With("pion", scope), scope: scope, agg: f.agg}
}

type slogLogger struct {
	log   *slog.Logger
	scope string
	agg   *logagg.Aggregator[pionKey, *slog.Logger]
}

// pass reports whether a line at level should be written: enabled, and for warnings and errors not
// a repeat within the window.
func (l slogLogger) pass(level slog.Level, format string) bool {
	if !l.log.Enabled(context.Background(), level) {
		return false
	}
	return level < slog.LevelWarn || l.agg.Observe(pionKey{l.scope, level, format}, l.log)
}

func (l slogLogger) at(level slog.Level, msg string) {
	if l.pass(level, msg) {
		l.log.Log(context.Background(), level, msg)
	}
}

func (l slogLogger) atf(level slog.Level, format string, args ...any) {
	if l.pass(level, format) {
		l.log.Log(context.Background(), level, fmt.Sprintf(format, args...))
	}
}

func (l slogLogger) Trace(msg string)                  { l.at(slog.LevelDebug-4, msg) }
func (l slogLogger) Tracef(format string, args ...any) { l.atf(slog.LevelDebug-4, format, args...) }
func (l slogLogger) Debug(msg string)                  { l.at(slog.LevelDebug-2, msg) }
func (l slogLogger) Debugf(format string, args ...any) { l.atf(slog.LevelDebug-2, format, args...) }
func (l slogLogger) Info(msg string)                   { l.at(slog.LevelDebug, msg) }
func (l slogLogger) Infof(format string, args ...any)  { l.atf(slog.LevelDebug, format, args...) }
func (l slogLogger) Warn(msg string)                   { l.at(slog.LevelWarn, msg) }
func (l slogLogger) Warnf(format string, args ...any)  { l.atf(slog.LevelWarn, format, args...) }
func (l slogLogger) Error(msg string)                  { l.at(slog.LevelError, msg) }
func (l slogLogger) Errorf(format string, args ...any) { l.atf(slog.LevelError, format, args...) }
