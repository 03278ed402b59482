package peer

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pion/logging"
)

// slogFactory routes Pion's logs into strata's slog logger. Pion is chatty at info level about normal
// events (candidates, state changes), so its info becomes debug; its warnings and errors stay.
type slogFactory struct{ log *slog.Logger }

func newLoggerFactory(log *slog.Logger) logging.LoggerFactory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return slogFactory{log: log}
}

func (f slogFactory) NewLogger(scope string) logging.LeveledLogger {
	return slogLogger{log: f.log.With("pion", scope)}
}

type slogLogger struct{ log *slog.Logger }

func (l slogLogger) at(level slog.Level, msg string) {
	l.log.Log(context.Background(), level, msg)
}

func (l slogLogger) atf(level slog.Level, format string, args ...any) {
	if l.log.Enabled(context.Background(), level) {
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
