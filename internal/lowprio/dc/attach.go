package dc

import (
	"context"
	"errors"
	"sync"

	"github.com/pion/webrtc/v4"
)

// ErrUsed is returned by a Transfer's Send or Receive after the first.
var ErrUsed = errors.New("lowprio: the transfer already ran")

// Transfer is a data channel taken over for one low-priority transfer that has not run yet.
type Transfer struct {
	c    *channel
	opts Options
	once sync.Once
}

// Attach takes over ch's handlers for one transfer with opts, at once and without blocking. Pion
// drops a message that arrives before a channel has a message handler, and the sender would then
// wait for its retransmission timeout (a second before the first RTT sample): a side that accepts
// channels calls Attach in the PeerConnection's OnDataChannel handler and runs Send or Receive
// later on a goroutine of the transfer's own; messages that arrive in between wait in the
// transfer's bounded queue. The clock of the transfer starts here.
func Attach(ch *webrtc.DataChannel, opts Options) *Transfer {
	return &Transfer{c: attach(ch, opts.config().MaxMessage), opts: opts}
}

// start claims the transfer for its one run and waits until the channel is open; on an error the
// channel is released.
func (t *Transfer) start(ctx context.Context) (*channel, error) {
	used := true
	t.once.Do(func() { used = false })
	if used {
		return nil, ErrUsed
	}
	if err := t.c.waitOpen(ctx); err != nil {
		t.c.detach()
		return nil, err
	}
	return t.c, nil
}

// Close releases a transfer that will not run: it closes the channel. A transfer that ran
// released it already.
func (t *Transfer) Close() {
	t.once.Do(func() { t.c.detach() })
}
