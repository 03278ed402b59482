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

// chunkSize is the size of the buffers between a transfer and its reader or writer goroutine.
const chunkSize = 64 << 10

type chunk struct {
	b   []byte
	err error
}

// Send sends what r yields on ch at low priority and returns when the receiver acknowledged all
// of it (then the channel is closed), or with the error that ended the transfer (after a RESET,
// the channel closed too). It is Attach(ch, opts).Send(ctx, r).
func Send(ctx context.Context, ch *webrtc.DataChannel, r io.Reader, opts Options) (Stats, error) {
	return Attach(ch, opts).Send(ctx, r)
}

// Send runs the transfer as the sending side (see the package function Send). r is read on a
// goroutine of its own, which a blocked Read keeps alive until it returns.
func (t *Transfer) Send(ctx context.Context, r io.Reader) (Stats, error) {
	ctrl, err := t.opts.controller()
	if err != nil {
		t.Close()
		return Stats{}, err
	}
	c, err := t.start(ctx)
	if err != nil {
		return Stats{}, err
	}
	defer c.detach()
	s := &sendLoop{c: c, s: lowprio.NewSender(t.opts.config(), ctrl), opts: &t.opts, p: newProgress(&t.opts),
		free: make(chan []byte, 2), full: make(chan chunk, 2)}
	for range cap(s.free) {
		s.free <- make([]byte, chunkSize)
	}
	stop := make(chan struct{})
	defer close(stop)
	go readPump(r, s.free, s.full, stop)
	return s.run(ctx)
}

// readPump reads r into the free buffers and hands them over full, until an error or stop.
func readPump(r io.Reader, free <-chan []byte, full chan<- chunk, stop <-chan struct{}) {
	for {
		var b []byte
		select {
		case b = <-free:
		case <-stop:
			return
		}
		n, err := r.Read(b[:cap(b)])
		select {
		case full <- chunk{b[:n], err}:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}

type sendLoop struct {
	c    *channel
	s    *lowprio.Sender
	opts *Options
	p    progress

	free    chan []byte
	full    chan chunk
	cur     chunk // the chunk being written into the sender, from cur.b[off:]
	off     int
	have    bool
	readErr error
	capAt   time.Duration
}

func (l *sendLoop) run(ctx context.Context) (Stats, error) {
	tm := newTimer()
	defer tm.t.Stop()
	for {
		now := l.c.now()
		l.applyCap(now)
		l.feed()
		next := lowprio.Never
		if !l.c.holding(l.s.Stats().InFlight) || l.s.Err() != nil {
			next = l.s.Poll(now, l.c.out)
		} else {
			next = now + holdRecheck
		}
		if end, st, err := l.ended(now); end {
			return st, err
		}
		if l.opts.Cap != nil {
			next = min(next, l.capAt)
		}
		next = min(next, l.p.next())
		l.p.report(now, l.progress(false))
		full := l.full
		if l.have {
			full = nil // one chunk at a time: the next waits until this one is in the sender
		}
		select {
		case <-ctx.Done():
			l.s.Abort("cancelled: " + ctx.Err().Error())
			l.s.Poll(l.c.now(), l.c.out)
			return l.stats(), ctx.Err()
		case m := <-l.c.in:
			if err := l.onMessage(l.c.now(), m); err != nil {
				return l.stats(), err
			}
		case ck := <-full:
			l.cur, l.off, l.have = ck, 0, true
		case <-l.c.closed:
			return l.finish(l.c.now(), l.why(ErrClosed))
		case <-l.c.drained:
		case <-tm.reset(now, next):
		}
	}
}

// onMessage hands a message to the sender; a message that cannot belong here ends the transfer.
func (l *sendLoop) onMessage(now time.Duration, m inbound) error {
	if m.text {
		return l.c.protocolError(ErrText)
	}
	if err := l.s.OnMessage(now, m.data); err != nil && routeError(err) {
		return l.c.protocolError(fmt.Errorf("%w (on a sending channel)", err))
	}
	return nil // other errors end the sender: Poll sends its RESET, ended reports it
}

// why is the error that ended a transfer whose channel closed or failed: the peer's RESET if one
// is still queued, else err.
func (l *sendLoop) why(err error) error {
	now := l.c.now()
	l.c.drain(func(m inbound) { _ = l.onMessage(now, m) })
	if l.s.Err() != nil {
		return l.s.Err()
	}
	return err
}

// feed writes the current chunk into the sender's buffer and recycles it when consumed.
func (l *sendLoop) feed() {
	if !l.have {
		return
	}
	l.off += l.s.Write(l.cur.b[l.off:])
	if l.off < len(l.cur.b) {
		return
	}
	l.have = false
	switch {
	case l.cur.err == nil:
		l.free <- l.cur.b[:0]
	case errors.Is(l.cur.err, io.EOF):
		l.s.Close()
	default:
		l.readErr = l.cur.err
		l.s.Abort("sender's read failed")
	}
}

// applyCap polls the external rate cap.
func (l *sendLoop) applyCap(now time.Duration) {
	if l.opts.Cap == nil || now < l.capAt {
		return
	}
	l.capAt = now + CapInterval
	l.s.SetCap(0, max(l.opts.Cap(), MinCap))
}

// ended reports whether the transfer is over: the FIN acknowledged, or an error.
func (l *sendLoop) ended(now time.Duration) (bool, Stats, error) {
	switch {
	case l.c.sendErr != nil:
		l.c.settle()
		st, err := l.finish(now, l.why(fmt.Errorf("lowprio: send on the data channel: %w", l.c.sendErr)))
		return true, st, err
	case l.readErr != nil:
		st, err := l.finish(now, fmt.Errorf("lowprio: reading the stream: %w", l.readErr))
		return true, st, err
	case l.s.Err() != nil:
		st, err := l.finish(now, l.s.Err())
		return true, st, err
	case l.s.Done():
		st, err := l.finish(now, nil)
		return true, st, err
	}
	return false, Stats{}, nil
}

func (l *sendLoop) finish(now time.Duration, err error) (Stats, error) {
	pr := l.progress(true)
	l.p.report(now, pr)
	return l.stats(), err
}

func (l *sendLoop) progress(done bool) Progress {
	st := l.s.Stats()
	return Progress{Bytes: st.Acked, RTT: st.RTT, QueueDelay: st.QueueDelay, Cwnd: st.Cwnd, InFlight: st.InFlight, Done: done}
}

func (l *sendLoop) stats() Stats {
	st := l.s.Stats()
	return Stats{Bytes: st.Acked, Elapsed: l.c.now(), Retransmits: st.Retransmits, Timeouts: st.Timeouts, Dropped: int(l.c.dropped.Load())}
}
