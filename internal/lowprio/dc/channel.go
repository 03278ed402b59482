package dc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/lowprio"
)

// Errors of the binding.
var (
	ErrClosed = errors.New("lowprio: data channel closed before the transfer ended")
	ErrText   = errors.New("lowprio: text message on a low-priority channel")
)

const (
	// inboundQueue bounds the messages waiting for the transfer's goroutine; beyond it they are
	// dropped (and retransmitted or re-acknowledged by the protocol), never queued without bound.
	inboundQueue = 512
	// holdMessages is how many messages may wait in SCTP's send queue before the sender holds
	// back: the protocol's window must be in the network, not in a queue its timestamps miss.
	holdMessages = 4
	// holdRecheck bounds a hold in case the buffered-amount-low callback was missed.
	holdRecheck = 50 * time.Millisecond
	// settleTimeout bounds the wait for a failed channel's last messages (see settle).
	settleTimeout = time.Second
)

type inbound struct {
	data []byte
	text bool
}

// channel is one transfer's view of its data channel: inbound messages, open/close and
// buffered-amount-low signals, and the outbound send that Poll's messages go through.
type channel struct {
	ch      *webrtc.DataChannel
	start   time.Time
	in      chan inbound
	open    chan struct{}
	closed  chan struct{}
	drained chan struct{}
	dropped atomic.Int64
	hold    uint64
	sendErr error
	out     func([]byte) // c.send, bound once so Poll's callback allocates nothing
}

// attach takes over ch's handlers (message, open, close, buffered-amount-low).
func attach(ch *webrtc.DataChannel, maxMessage int) *channel {
	c := &channel{
		ch: ch, start: time.Now(), in: make(chan inbound, inboundQueue),
		open: make(chan struct{}), closed: make(chan struct{}), drained: make(chan struct{}, 1),
		hold: uint64(holdMessages * maxMessage),
	}
	c.out = c.send
	var openOnce, closeOnce sync.Once
	ch.OnOpen(func() { openOnce.Do(func() { close(c.open) }) })
	ch.OnClose(func() { closeOnce.Do(func() { close(c.closed) }) })
	ch.SetBufferedAmountLowThreshold(uint64(maxMessage))
	ch.OnBufferedAmountLow(func() {
		select {
		case c.drained <- struct{}{}:
		default:
		}
	})
	// Pion hands every message a fresh slice, so it can be queued as it is.
	ch.OnMessage(func(m webrtc.DataChannelMessage) {
		select {
		case c.in <- inbound{m.Data, m.IsString}:
		default:
			c.dropped.Add(1)
		}
	})
	if ch.ReadyState() == webrtc.DataChannelStateOpen {
		openOnce.Do(func() { close(c.open) })
	}
	return c
}

// detach drops the handlers that reference the transfer and closes the channel.
func (c *channel) detach() {
	c.ch.OnMessage(func(webrtc.DataChannelMessage) {})
	c.ch.OnBufferedAmountLow(nil)
	_ = c.ch.Close()
}

// settle waits, after a send failed, until the channel has closed: Pion delivers every message
// that arrived before it reports the close, so a RESET that explains the failure is queued by then.
func (c *channel) settle() {
	select {
	case <-c.closed:
	case <-time.After(settleTimeout):
	}
}

// drain hands every queued message to f (on a channel that closed or failed: a RESET among them
// says why).
func (c *channel) drain(f func(inbound)) {
	for {
		select {
		case m := <-c.in:
			f(m)
		default:
			return
		}
	}
}

// now is the transfer's clock: monotonic time since it started.
func (c *channel) now() time.Duration { return time.Since(c.start) }

// waitOpen waits until the channel is open.
func (c *channel) waitOpen(ctx context.Context) error {
	select {
	case <-c.open:
		return nil
	case <-c.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send is Poll's output: the message goes to SCTP (which copies it); the first error sticks.
func (c *channel) send(b []byte) {
	if c.sendErr == nil {
		c.sendErr = c.ch.Send(b)
	}
}

// holding reports that SCTP's send queue holds more than a few messages beyond inFlight, the bytes
// the protocol has in the network. Pion counts a message in bufferedAmount until SCTP has it
// acknowledged (a browser only until it is sent), so the bytes in flight are allowed for: what
// is above them waits in the queue. When it holds, the low threshold is moved to just above the
// flight, so the callback wakes the sender as soon as the queue drained.
func (c *channel) holding(inFlight int) bool {
	limit := uint64(inFlight) + c.hold
	if c.ch.BufferedAmount() <= limit {
		return false
	}
	c.ch.SetBufferedAmountLowThreshold(limit - c.hold/holdMessages)
	return true
}

// protocolError ends a transfer for a message the protocol core does not fail on by itself (text,
// another transfer id, a message type for the other direction): the binding sends the RESET.
func (c *channel) protocolError(err error) error {
	var buf [256]byte
	b, _ := lowprio.EncodeReset(buf[:0], 1, lowprio.CodeProtocol, err.Error())
	c.send(b)
	return err
}

// routeError says whether an error returned by OnMessage ends the transfer: on a channel that
// carries one transfer in one direction, a message for another transfer or direction cannot be
// right.
func routeError(err error) bool {
	return errors.Is(err, lowprio.ErrWrongTransfer) || errors.Is(err, lowprio.ErrUnexpected)
}

// timer is a reusable deadline on the transfer's clock.
type timer struct {
	t *time.Timer
}

func newTimer() timer { return timer{time.NewTimer(time.Hour)} }

// reset arms the timer for the transfer-clock deadline at, from now.
func (t timer) reset(now, at time.Duration) <-chan time.Time {
	if at == lowprio.Never {
		at = now + time.Hour
	}
	t.t.Reset(max(at-now, 0))
	return t.t.C
}

// progress tracks when to report and the rate between reports.
type progress struct {
	fn        func(Progress)
	every, at time.Duration
	lastBytes uint64
	lastAt    time.Duration
}

func newProgress(o *Options) progress {
	return progress{fn: o.Progress, every: o.progressInterval()}
}

// next is when the next report is due (Never without a callback).
func (p *progress) next() time.Duration {
	if p.fn == nil {
		return lowprio.Never
	}
	return p.at
}

// report calls the callback when a report is due or the transfer ended.
func (p *progress) report(now time.Duration, pr Progress) {
	if p.fn == nil || (now < p.at && !pr.Done) {
		return
	}
	if dt := now - p.lastAt; dt > 0 {
		pr.Rate = cc.BitrateOf(int(pr.Bytes-p.lastBytes), dt)
	}
	pr.Elapsed = now
	p.lastBytes, p.lastAt, p.at = pr.Bytes, now, now+p.every
	p.fn(pr)
}
