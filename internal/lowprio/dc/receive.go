package dc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/strata-rtc/strata/internal/lowprio"
)

// Receive receives a stream on ch at low priority and writes it to w. It returns when the whole
// stream was written and the sender closed the channel (or Options.Linger passed), or with the
// error that ended the transfer (after a RESET, the channel closed). It is
// Attach(ch, opts).Receive(ctx, w).
func Receive(ctx context.Context, ch *webrtc.DataChannel, w io.Writer, opts Options) (Stats, error) {
	return Attach(ch, opts).Receive(ctx, w)
}

// Receive runs the transfer as the receiving side (see the package function Receive). w is
// written on a goroutine of its own; a writer that falls behind closes the receive window,
// which holds the sender back.
func (t *Transfer) Receive(ctx context.Context, w io.Writer) (Stats, error) {
	if err := CheckVariant(t.opts.Variant); err != nil {
		t.Close()
		return Stats{}, err
	}
	c, err := t.start(ctx)
	if err != nil {
		return Stats{}, err
	}
	defer c.detach()
	l := &recvLoop{c: c, r: lowprio.NewReceiver(t.opts.config()), opts: &t.opts, p: newProgress(&t.opts),
		free: buffers(), jobs: make(chan []byte, pumpBuffers), done: make(chan chunk, pumpBuffers)}
	stop := make(chan struct{})
	defer close(stop)
	go pump(l.jobs, l.done, stop, func(b []byte) ([]byte, error) {
		_, err := w.Write(b)
		return b, err
	})
	return l.run(ctx)
}

type recvLoop struct {
	c    *channel
	r    *lowprio.Receiver
	opts *Options
	p    progress

	free, jobs chan []byte
	done       chan chunk
	writing    int // buffers with the writer
	written    uint64
	writeErr   error
	eof        bool
	dry        bool // the last Read found nothing
	peerClosed bool
	lingerTill time.Duration
}

func (l *recvLoop) run(ctx context.Context) (Stats, error) {
	tm := newTimer()
	defer tm.t.Stop()
	cancelled := ctx.Done()
	for {
		now := l.c.now()
		l.drain()
		out := l.c.out
		if l.gone() {
			out = discard
		}
		next := l.r.Poll(now, out)
		if end, err := l.ended(now); end {
			return l.finish(now, err)
		}
		if l.complete() {
			if l.lingerTill == 0 {
				l.lingerTill = now + l.opts.linger()
			}
			next = min(next, l.lingerTill)
		}
		next = min(next, l.p.next())
		l.p.report(now, l.progress(false))
		closed := l.c.closed
		if l.peerClosed {
			closed = nil
		}
		select {
		case <-cancelled:
			if l.r.Complete() {
				// Every byte is here and acknowledged, and the sender may be gone already (a client
				// closes its PeerConnection once its FIN is acknowledged): only writing it out is
				// left, which the cancellation must not throw away. The loop ends once it is written.
				cancelled = nil
				continue
			}
			l.r.Abort("cancelled: " + ctx.Err().Error())
			l.r.Poll(l.c.now(), l.c.out)
			return l.finish(l.c.now(), ctx.Err())
		case m := <-l.c.in:
			if err := l.onMessage(l.c.now(), m); err != nil {
				return l.finish(l.c.now(), err)
			}
		case ck := <-l.done:
			l.writing--
			l.written += uint64(len(ck.b))
			if ck.err != nil {
				l.writeErr = ck.err
				l.r.Abort("receiver's write failed")
			} else {
				l.free <- ck.b[:0]
			}
		case <-closed:
			l.peerClosed = true
		case <-tm.reset(now, next):
		}
	}
}

func (l *recvLoop) onMessage(now time.Duration, m inbound) error {
	return l.c.deliver(now, m, l.r.OnMessage, "receiving")
}

// drain moves in-order bytes from the receiver to the writer while it has a free buffer; what
// stays in the receiver keeps its window closed.
func (l *recvLoop) drain() {
	for !l.eof && l.r.Err() == nil {
		var b []byte
		select {
		case b = <-l.free:
		default:
			return
		}
		n, err := l.r.Read(b[:cap(b)])
		if errors.Is(err, io.EOF) {
			l.eof = true
		}
		l.dry = n == 0
		if n == 0 {
			l.free <- b
			return
		}
		l.writing++
		l.jobs <- b[:n]
	}
}

// complete reports that the whole stream was read and written.
func (l *recvLoop) complete() bool { return l.eof && l.writing == 0 && l.writeErr == nil }

// gone reports that the channel closed or failed: nothing more arrives or leaves, but what the
// receiver holds is still written out, since the sender may have closed as soon as it saw the
// ACK of its FIN.
func (l *recvLoop) gone() bool { return l.peerClosed || l.c.sendErr != nil }

func discard([]byte) {}

// ended reports whether the transfer is over: an error, the stream written after the channel went,
// or the linger after completion passed.
func (l *recvLoop) ended(now time.Duration) (bool, error) {
	switch {
	case l.writeErr != nil:
		return true, fmt.Errorf("lowprio: writing the stream: %w", l.writeErr)
	case l.r.Err() != nil:
		return true, l.r.Err()
	case l.complete() && (l.gone() || l.lingerTill > 0 && now >= l.lingerTill):
		return true, nil
	case l.gone() && l.dry && !l.eof && l.writing == 0:
		if !l.peerClosed {
			l.c.settle()
		}
		l.c.drain(func(m inbound) { _ = l.onMessage(now, m) })
		if l.r.Err() != nil {
			return true, l.r.Err() // the peer's RESET says why
		}
		if l.c.sendErr != nil && !l.peerClosed {
			return true, fmt.Errorf("lowprio: send on the data channel: %w", l.c.sendErr)
		}
		return true, ErrClosed
	}
	return false, nil
}

func (l *recvLoop) finish(now time.Duration, err error) (Stats, error) {
	l.p.report(now, l.progress(true))
	return Stats{Bytes: l.written, Elapsed: now, Dropped: int(l.c.dropped.Load())}, err
}

func (l *recvLoop) progress(done bool) Progress {
	return Progress{Bytes: l.r.Received(), Done: done}
}
