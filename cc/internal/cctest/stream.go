package cctest

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// FeedbackStream generates an endless, allocation-free stream of feedback messages for
// benchmarks: a packet every Spacing, a one-way delay that wanders in a 0–3 ms sawtooth (so
// grouping, filters and detectors all do real work), one packet in 50 lost and one in 40
// CE-marked. Next reuses the same slice, so a message is valid until the next call.
type FeedbackStream struct {
	spacing time.Duration
	per     int
	seq     int64
	buf     []cc.PacketResult
}

// NewFeedbackStream returns a stream of perFeedback packets per message, spaced by spacing.
func NewFeedbackStream(perFeedback int, spacing time.Duration) *FeedbackStream {
	return &FeedbackStream{spacing: spacing, per: perFeedback, buf: make([]cc.PacketResult, perFeedback)}
}

// Next returns the next message.
func (s *FeedbackStream) Next() cc.Feedback {
	for i := range s.buf {
		send := time.Duration(s.seq) * s.spacing
		jitter := time.Duration(s.seq%30) * 100 * time.Microsecond
		s.buf[i] = cc.PacketResult{
			SeqNo: s.seq, SendTime: send, Size: 1200, Arrival: send + 40*time.Millisecond + jitter,
			Lost: s.seq%50 == 49, CE: s.seq%40 == 39,
		}
		s.seq++
	}
	last := s.buf[len(s.buf)-1]
	return cc.Feedback{Now: last.SendTime + 80*time.Millisecond, Packets: s.buf}
}

// PerFeedback is the number of packets in each message.
func (s *FeedbackStream) PerFeedback() int { return s.per }

// AckStream generates an endless, allocation-free stream of acks for window controllers: one
// segment acknowledged per ack, a queuing delay that wanders in a 0–150 ms sawtooth around a
// 50 ms base (so delay-based controllers both grow and shrink), a duplicate-ack triple every 500
// acks and a timeout never.
type AckStream struct {
	MSS int
	n   int64
	now time.Duration
}

// Next returns the next ack for a sender whose window is cwnd.
func (s *AckStream) Next(cwnd int) cc.Ack {
	s.n++
	s.now += time.Millisecond
	q := time.Duration(s.n%1500) * 100 * time.Microsecond
	a := cc.Ack{Now: s.now, Acked: s.MSS, InFlight: cwnd, RTT: 100*time.Millisecond + q, OneWayDelay: 50*time.Millisecond + q}
	if k := s.n % 500; k >= 497 {
		a.Acked = 0 // three duplicates
	}
	return a
}
