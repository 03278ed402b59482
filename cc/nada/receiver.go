package nada

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Receiver is NADA's receive-side computation (RFC 8698 §5.1): feed it every received packet and
// call Report every DELTA; send the report to the sender, which passes it to Sender.OnReport. It
// implements cc.ReceiverEstimator.
type Receiver struct {
	cfg  Config
	sig  signal
	last Report
}

// NewReceiver returns a NADA receiver.
func NewReceiver(opts ...Option) *Receiver {
	r := &Receiver{cfg: newConfig(opts)}
	r.sig = newSignal(&r.cfg)
	return r
}

// OnPacket processes one received packet; losses are inferred from sequence-number gaps.
func (r *Receiver) OnPacket(p cc.ReceivedPacket) {
	r.sig.onSequence(p.SeqNo, p.Arrival)
	r.sig.onReceived(p.SendTime, p.Arrival, p.Size, p.CE)
}

// Report computes the feedback due at now (the receiver's clock). Call it every DELTA.
func (r *Receiver) Report(now time.Duration) Report {
	r.last = r.sig.report(now)
	return r.last
}

// Interval is how often Report should be called (DELTA).
func (r *Receiver) Interval() time.Duration { return r.cfg.Delta }

// State is a snapshot of the last report.
func (r *Receiver) State() cc.State {
	return cc.State{
		Algorithm:    "nada",
		Received:     r.last.RRecv,
		QueueDelayMs: ms(r.last.QueueDelay),
		SignalMs:     ms(r.last.XCurr),
		LossRate:     r.last.LossRate,
		Phase:        modeName(r.last.RMode),
	}
}

func modeName(rmode int) string {
	if rmode == 0 {
		return "accelerated"
	}
	return "gradual"
}
