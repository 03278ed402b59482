package lowprio

import "time"

// queueFilter is how many recent samples the current delay is the minimum of (RFC 6817's
// CURRENT_FILTER, as cc/ledbat uses).
const queueFilter = 4

// QueueMeter estimates, at a receiver, the queuing delay its DATA messages met on the way, the
// quantity the sender's LEDBAT keeps near its target: each message's one-way delay (arrival on
// the receiver's clock minus the sender's timestamp, whose unknown offset is constant) minus the
// smallest seen in the transfer, taken as the minimum of the last four samples. A receiving
// application (the browser demo) shows it; the protocol does not need it. The zero value is
// ready; it allocates nothing.
type QueueMeter struct {
	base   uint32 // the smallest one-way delay (µs, modulo 2³²) seen
	recent [queueFilter]uint32
	n      int
	msg    Message
}

// Observe takes one message from the sender; anything but a well-formed DATA is ignored.
func (q *QueueMeter) Observe(now time.Duration, b []byte) {
	if Decode(b, &q.msg) != nil || q.msg.Type != TypeData {
		return
	}
	owd := ts(now) - q.msg.SendTS // wraps with the clocks; only differences are used
	if q.n == 0 || int32(owd-q.base) < 0 {
		q.base = owd
	}
	q.recent[q.n%queueFilter] = owd
	q.n++
}

// Delay is the current queuing delay estimate (0 before the first DATA).
func (q *QueueMeter) Delay() time.Duration {
	if q.n == 0 {
		return 0
	}
	best := int32(q.recent[0] - q.base)
	for _, owd := range q.recent[1:min(q.n, queueFilter)] {
		best = min(best, int32(owd-q.base))
	}
	return time.Duration(best) * time.Microsecond
}
