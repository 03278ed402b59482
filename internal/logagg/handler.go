package logagg

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// lineKey identifies a repeated line of a Handler: its level and message. Attributes are not part
// of it — they carry what varies (the session, the address) while the message says what happened.
type lineKey struct {
	level slog.Level
	msg   string
}

// overflowMsg is the overflow key's message: lines held back because too many distinct messages
// repeated in one window.
const overflowMsg = "further repeated log lines held back"

// Handler is a slog.Handler that writes a record at or above its minimum level only once per window
// for each level and message; the rest are counted and summarised (see the package comment). Records
// below the minimum pass straight through. Handlers derived with WithAttrs and WithGroup share the
// counts: a line repeated by a thousand sessions is still one line, and its summary is written
// without the attributes of any one of them.
type Handler struct {
	inner slog.Handler
	root  slog.Handler // inner without derived attributes: where summaries go
	min   slog.Level
	agg   *Aggregator[lineKey, struct{}]
}

// NewHandler wraps inner, aggregating records at min and above over window (DefaultWindow if <= 0).
// A nil clock is the real one.
func NewHandler(inner slog.Handler, min slog.Level, window time.Duration, clock Clock) *Handler {
	h := &Handler{inner: inner, root: inner, min: min}
	h.agg = New(window, clock, lineKey{level: slog.LevelWarn, msg: overflowMsg}, h.summary)
	return h
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.min || h.agg.Observe(lineKey{r.Level, r.Message}, struct{}{}) {
		return h.inner.Handle(ctx, r)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(as), root: h.root, min: h.min, agg: h.agg}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), root: h.root, min: h.min, agg: h.agg}
}

// Drain writes every pending summary now (at shutdown).
func (h *Handler) Drain() { h.agg.Drain() }

// summary writes "<message> [repeated N times in W]" with a "repeated" attribute.
func (h *Handler) summary(k lineKey, _ struct{}, n int, window time.Duration) {
	r := slog.NewRecord(h.agg.clock.Now(), k.level, Repeated(k.msg, n, window), 0)
	r.AddAttrs(slog.Int("repeated", n))
	_ = h.root.Handle(context.Background(), r)
}

// Repeated is the message of a summary line.
func Repeated(msg string, n int, window time.Duration) string {
	return fmt.Sprintf("%s [repeated %d times in %s]", msg, n, window)
}
