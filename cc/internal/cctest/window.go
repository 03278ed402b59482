package cctest

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// WindowConfig describes a closed-loop run of a window controller over a minimal reliable
// transport: segments of MSS bytes, a receiver that acknowledges every segment cumulatively
// (duplicates when a segment is missing) and echoes its send time, acks returned over the
// uncongested reverse path, retransmission of the first unacknowledged segment when the
// controller asks, and go-back-N after an RTO.
type WindowConfig struct {
	Link           Link
	Duration       time.Duration
	MSS            int           // segment size (default 1460)
	SampleInterval time.Duration // trace resolution (default 100 ms)
}

type ackEvent struct {
	at       time.Duration
	cum      int // next segment expected by the receiver
	echoSend time.Duration
	owd      time.Duration
}

type windowRun struct {
	cfg      WindowConfig
	ctrl     cc.WindowController
	link     Link
	una, nxt int // first unacknowledged and next new segment
	received []bool
	rcvNxt   int
	acks     []ackEvent
	rtoAt    time.Duration
	rtoArmed bool
	// recoverAt is the segment that ends a fast recovery (snd_nxt when it began), and
	// partialSeen whether its first partial ack was seen: RFC 6582's Impatient variant re-arms the
	// RTO only on that first partial ack, so a recovery with many holes falls back to the RTO
	// instead of retransmitting one segment per RTT.
	recoverAt   int
	recovering  bool
	partialSeen bool
	delivered   []int
	trace       Trace
}

// RunWindow drives ctrl for cfg.Duration with an always-backlogged sender.
func RunWindow(ctrl cc.WindowController, cfg WindowConfig) Trace {
	if cfg.MSS <= 0 {
		cfg.MSS = 1460
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 100 * time.Millisecond
	}
	r := &windowRun{cfg: cfg, ctrl: ctrl, link: cfg.Link}
	r.delivered = make([]int, int(cfg.Duration/cfg.SampleInterval)+2)
	r.sendAllowed(0)
	nextSample := cfg.SampleInterval
	for {
		now := nextSample
		if len(r.acks) > 0 {
			now = min(now, r.acks[0].at)
		}
		if r.rtoArmed {
			now = min(now, r.rtoAt)
		}
		if now > cfg.Duration {
			break
		}
		switch {
		case len(r.acks) > 0 && r.acks[0].at == now:
			a := r.acks[0]
			r.acks = r.acks[1:]
			r.onAck(a)
		case r.rtoArmed && r.rtoAt == now:
			r.onTimeout(now)
		default:
			r.sample(now)
			nextSample += cfg.SampleInterval
		}
	}
	r.trace.Dropped = r.link.Dropped
	return r.trace
}

func (r *windowRun) inFlight() int { return (r.nxt - r.una) * r.cfg.MSS }

func (r *windowRun) armRTO(now time.Duration) {
	r.rtoAt, r.rtoArmed = now+r.ctrl.RTO(), r.una < r.nxt
}

// transmit sends segment seq through the link and schedules the receiver's ack.
func (r *windowRun) transmit(now time.Duration, seq int) {
	r.trace.Sent++
	arrival, dropped := r.link.Send(now, r.cfg.MSS)
	if dropped {
		return
	}
	if bin := int(arrival / r.cfg.SampleInterval); bin < len(r.delivered) {
		r.delivered[bin] += r.cfg.MSS
	}
	for len(r.received) <= seq {
		r.received = append(r.received, false)
	}
	r.received[seq] = true
	for r.rcvNxt < len(r.received) && r.received[r.rcvNxt] {
		r.rcvNxt++
	}
	// FIFO link and constant reverse delay: acks arrive in the order generated.
	r.acks = append(r.acks, ackEvent{at: arrival + r.link.Delay, cum: r.rcvNxt, echoSend: now, owd: arrival - now})
}

func (r *windowRun) sendAllowed(now time.Duration) {
	for r.inFlight()+r.cfg.MSS <= r.ctrl.Cwnd() {
		r.transmit(now, r.nxt)
		r.nxt++
	}
	if !r.rtoArmed && r.una < r.nxt {
		r.armRTO(now)
	}
}

func (r *windowRun) onAck(a ackEvent) {
	ack := cc.Ack{Now: a.at, InFlight: r.inFlight(), RTT: a.at - a.echoSend, OneWayDelay: a.owd}
	advanced := a.cum > r.una
	if advanced {
		ack.Acked = (a.cum - r.una) * r.cfg.MSS
		r.una = a.cum
		r.nxt = max(r.nxt, r.una)
	} else if r.una == r.nxt {
		return // nothing outstanding: a stale duplicate
	}
	retransmit := r.ctrl.OnAck(ack)
	if retransmit && !advanced && !r.recovering {
		r.recovering, r.recoverAt, r.partialSeen = true, r.nxt, false
	}
	if retransmit {
		r.transmit(a.at, r.una)
	}
	if r.recovering && r.una >= r.recoverAt {
		r.recovering = false
	}
	if advanced && (!r.recovering || !r.partialSeen) {
		r.partialSeen = r.recovering
		r.armRTO(a.at)
	}
	r.sendAllowed(a.at)
}

func (r *windowRun) onTimeout(now time.Duration) {
	r.ctrl.OnTimeout(now, r.inFlight())
	r.nxt = r.una // go-back-N
	r.rtoArmed, r.recovering = false, false
	r.sendAllowed(now)
	if r.una == r.nxt { // window too small to send even one segment: retransmit anyway
		r.transmit(now, r.una)
		r.nxt = r.una + 1
	}
	r.armRTO(now)
}

func (r *windowRun) sample(now time.Duration) {
	bin := int(now/r.cfg.SampleInterval) - 1
	delivered := cc.Bitrate(0)
	if bin >= 0 && bin < len(r.delivered) {
		delivered = cc.BitrateOf(r.delivered[bin], r.cfg.SampleInterval)
	}
	r.trace.Samples = append(r.trace.Samples, Sample{
		At: now, Cwnd: r.ctrl.Cwnd(), QueueDelay: r.link.QueueDelay(now),
		Delivered: delivered, State: r.ctrl.State(),
	})
}
