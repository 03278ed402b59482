package events

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatch is the most events one delivery groups, as Janus's sample handler.
const maxBatch = 100

// maxBackoff caps the exponential wait between two delivery attempts.
const maxBackoff = 30 * time.Second

// Options configure one handler.
type Options struct {
	Name     string
	URL      string
	Mask     Mask
	Grouping bool
	// MaxRetransmissions is how many times an HTTP delivery is retried before its events are lost
	// (0: never); Backoff is the wait before the first retry, doubled for each next one. A WebSocket
	// backend reconnects and resends for ever, with the same backoff.
	MaxRetransmissions int
	Backoff            time.Duration
	// Queue bounds the events waiting for delivery; beyond it they are dropped and counted.
	Queue int
	// Timeout bounds one HTTP POST, or one WebSocket dial or write.
	Timeout time.Duration
	// User and Password: HTTP basic authentication (both must be set), as Janus's backend_user and
	// backend_pwd.
	User, Password string
	// Subprotocol is the WebSocket subprotocol asked for.
	Subprotocol string
}

// sender delivers one payload (a JSON object, or an array of them with grouping) in one attempt.
type sender interface {
	send(ctx context.Context, payload []byte) error
	// close releases the sender's resources once the worker has stopped.
	close()
}

// backend is what both kinds of handler share: the queue, the counters, the worker goroutine with
// its retry loop, and the settings query_eventhandler tweaks.
type backend struct {
	name      string
	log       *slog.Logger
	s         sender
	retryEver bool // WebSocket: never give a batch up

	mask     atomic.Uint32
	grouping atomic.Bool
	maxRetr  atomic.Int64
	backoff  atomic.Int64 // nanoseconds

	q                            chan []byte
	sent, dropped, lost, retries atomic.Uint64

	stop      chan struct{} // closed by Close: drain what is queued, then end
	ctx       context.Context
	cancel    context.CancelFunc // aborts an attempt or a wait once Close's timeout has passed
	done      chan struct{}
	closeOnce sync.Once
}

func newBackend(o Options, s sender, log *slog.Logger) *backend {
	b := &backend{name: o.Name, log: log.With("event_handler", o.Name), s: s,
		q: make(chan []byte, o.Queue), stop: make(chan struct{}), done: make(chan struct{})}
	b.mask.Store(uint32(o.Mask))
	b.grouping.Store(o.Grouping)
	b.maxRetr.Store(int64(o.MaxRetransmissions))
	b.backoff.Store(int64(o.Backoff))
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

func (b *backend) start() { go b.run() }

// Name implements Handler.
func (b *backend) Name() string { return b.name }

// Mask implements Handler.
func (b *backend) Mask() Mask { return Mask(b.mask.Load()) }

// Offer implements Handler.
func (b *backend) Offer(ev []byte) bool {
	select {
	case <-b.stop:
		b.dropped.Add(1)
		return false
	default:
	}
	select {
	case b.q <- ev:
		return true
	default:
		if b.dropped.Add(1) == 1 {
			b.log.Warn("event handler queue full: dropping events (counted in query_eventhandler's stats)")
		}
		return false
	}
}

func (b *backend) stats() Stats {
	return Stats{Sent: b.sent.Load(), Dropped: b.dropped.Load(), Lost: b.lost.Load(),
		Retries: b.retries.Load(), Queued: len(b.q)}
}

// Close implements Handler.
func (b *backend) Close(timeout time.Duration) {
	b.closeOnce.Do(func() {
		close(b.stop)
		t := time.AfterFunc(timeout, b.cancel)
		<-b.done
		t.Stop()
		b.cancel()
		b.s.close()
	})
}

// run takes batches from the queue and delivers them until Close, then delivers what is left while
// Close's timeout allows.
func (b *backend) run() {
	defer close(b.done)
	for {
		batch := b.next()
		if batch == nil {
			return
		}
		b.deliver(batch)
	}
}

// next waits for an event and takes up to maxBatch (with grouping) of those queued; nil once
// stopped with an empty queue, or once the close timeout has passed.
func (b *backend) next() [][]byte {
	var first []byte
	select {
	case first = <-b.q:
	case <-b.stop:
		select {
		case first = <-b.q:
		default:
			return nil
		}
	}
	if b.ctx.Err() != nil {
		b.lost.Add(uint64(1 + len(b.q)))
		for len(b.q) > 0 {
			<-b.q
		}
		return nil
	}
	batch := [][]byte{first}
	if !b.grouping.Load() {
		return batch
	}
	for len(batch) < maxBatch {
		select {
		case ev := <-b.q:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// deliver sends one batch, retrying with exponential backoff; the batch is lost after
// max_retransmissions failed retries (HTTP), or when Close's timeout passes.
func (b *backend) deliver(batch [][]byte) {
	payload := encode(batch, b.grouping.Load())
	n := uint64(len(batch))
	failing := false
	for attempt := 0; ; attempt++ {
		err := b.s.send(b.ctx, payload)
		if err == nil {
			b.sent.Add(n)
			if failing {
				b.log.Info("event handler backend reachable again", "retries", attempt)
			}
			return
		}
		b.retries.Add(1)
		if !failing {
			b.log.Warn("event handler backend failed, retrying", "err", err)
			failing = true
		}
		if b.ctx.Err() != nil || (!b.retryEver && int64(attempt) >= b.maxRetr.Load()) {
			b.lost.Add(n)
			b.log.Warn("events lost: backend failed", "events", n, "attempts", attempt+1, "err", err)
			return
		}
		wait := time.Duration(b.backoff.Load())
		for i := 0; i < attempt && wait < maxBackoff; i++ {
			wait *= 2
		}
		wait = min(wait, maxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-b.ctx.Done():
			t.Stop()
		}
	}
}

// encode makes one payload: a JSON array of the events with grouping, else the one event.
func encode(batch [][]byte, grouping bool) []byte {
	if !grouping && len(batch) == 1 {
		return batch[0]
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, ev := range batch {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(ev)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}
