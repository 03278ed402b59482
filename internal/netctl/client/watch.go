package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// EventType says what a watch Event carries.
type EventType int

// Watch event types.
const (
	// Connected: the decision stream is (again) open; a Snapshot follows.
	Connected EventType = iota + 1
	// Disconnected: the stream is down (Err matches ErrUnreachable). Decisions may be stale from
	// now on: fall back to local estimates until the next Connected and Snapshot.
	Disconnected
	// Snapshot: every current decision. Subscriptions missing from it have none (any earlier
	// decision for them is void).
	Snapshot
	// Decision: one subscription's decision changed (or it is new).
	Decision
	// Removed: a subscription is gone.
	Removed
)

func (t EventType) String() string {
	switch t {
	case Connected:
		return "connected"
	case Disconnected:
		return "disconnected"
	case Snapshot:
		return "snapshot"
	case Decision:
		return "decision"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one item of a watch.
type Event struct {
	Type     EventType
	Snapshot api.Decisions
	Decision api.Decision
	Removed  string // the subscription id
	Err      error
}

// WatchConfig tunes a watch.
type WatchConfig struct {
	// MinBackoff and MaxBackoff bound the wait between reconnection attempts (doubling).
	MinBackoff, MaxBackoff time.Duration
	// IdleTimeout: a stream that carries nothing, not even the server's heartbeat, for this long is
	// considered dead and reopened.
	IdleTimeout time.Duration
	// Buffer is the capacity of the Events channel.
	Buffer int
}

// DefaultWatchConfig returns the defaults: 250 ms to 5 s back-off, 45 s idle timeout (three
// heartbeats), 64 events of buffer.
func DefaultWatchConfig() WatchConfig {
	return WatchConfig{MinBackoff: 250 * time.Millisecond, MaxBackoff: 5 * time.Second, IdleTimeout: 45 * time.Second, Buffer: 64}
}

// Watch follows the decision stream (GET /v1/decisions/stream), reconnecting with back-off until
// it is closed.
type Watch struct {
	c      *Client
	cfg    WatchConfig
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Watch starts following decisions. Read Events until Close (or ctx ends): the watch blocks while
// the channel is full, so a reader that stops reading stalls only its own stream.
func (c *Client) Watch(ctx context.Context, cfg WatchConfig) *Watch {
	def := DefaultWatchConfig()
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = def.MinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(def.MaxBackoff, cfg.MinBackoff)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = def.IdleTimeout
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watch{c: c, cfg: cfg, events: make(chan Event, max(cfg.Buffer, 1)), cancel: cancel, done: make(chan struct{})}
	go w.loop(ctx)
	return w
}

// Events returns the channel of events; it is closed when the watch ends.
func (w *Watch) Events() <-chan Event { return w.events }

// Close stops the watch and waits for it to end.
func (w *Watch) Close() {
	w.once.Do(w.cancel)
	<-w.done
}

func (w *Watch) loop(ctx context.Context) {
	defer close(w.done)
	defer close(w.events)
	backoff := w.cfg.MinBackoff
	up := true // report the first failure too
	for {
		connected, err := w.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff, up = w.cfg.MinBackoff, true
		}
		if up {
			if !errors.Is(err, ErrUnreachable) {
				err = &unreachable{err}
			}
			if !w.send(ctx, Event{Type: Disconnected, Err: err}) {
				return
			}
			up = false
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, w.cfg.MaxBackoff)
	}
}

func (w *Watch) send(ctx context.Context, e Event) bool {
	select {
	case w.events <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// stream runs one connection; connected says whether it got as far as the snapshot.
func (w *Watch) stream(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(w.cfg.IdleTimeout, func() { cancel(errors.New("decision stream idle")) })
	defer idle.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.c.URL(api.Prefix+"/decisions/stream"), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := w.c.hc.Do(req)
	if err != nil {
		return false, w.cause(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return false, statusError(resp.StatusCode, body)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, fmt.Errorf("decision stream: unexpected content type %q", resp.Header.Get("Content-Type"))
	}
	rd := newSSEReader(&idleReader{r: resp.Body, idle: idle, d: w.cfg.IdleTimeout})
	for {
		ev, err := rd.next()
		if err != nil {
			return connected, w.cause(ctx, err)
		}
		e, err := decode(ev)
		if err != nil {
			return connected, err
		}
		if e.Type == Snapshot && !connected {
			connected = true
			if !w.send(ctx, Event{Type: Connected}) {
				return true, ctx.Err()
			}
		}
		if e.Type != 0 && !w.send(ctx, e) {
			return connected, ctx.Err()
		}
	}
}

// cause prefers the reason a connection's context ended (idle timeout) over the read error.
func (w *Watch) cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return &unreachable{c}
	}
	return &unreachable{err}
}

// decode turns a server-sent event into an Event (Type 0 for events it does not know).
func decode(ev sseEvent) (Event, error) {
	var e Event
	var err error
	switch ev.Event {
	case api.EventSnapshot:
		e.Type = Snapshot
		err = json.Unmarshal(ev.Data, &e.Snapshot)
	case api.EventDecision:
		e.Type = Decision
		err = json.Unmarshal(ev.Data, &e.Decision)
	case api.EventRemoved:
		var r api.Removed
		e.Type = Removed
		err = json.Unmarshal(ev.Data, &r)
		e.Removed = r.Subscription
	}
	if err != nil {
		return Event{}, fmt.Errorf("decision stream: bad %s event: %v", ev.Event, err)
	}
	return e, nil
}

// idleReader pushes the idle timer back whenever bytes arrive.
type idleReader struct {
	r    io.Reader
	idle *time.Timer
	d    time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.idle.Reset(r.d)
	}
	return n, err
}
