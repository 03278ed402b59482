package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

// bottleneck is an RFC 8867-style link: 50 ms one-way delay, drop-tail queue of 300 ms.
func bottleneck(rate cc.Bitrate) cctest.Link {
	return cctest.Link{Rate: rate, Delay: 50 * time.Millisecond, Buffer: rate.BytesIn(300 * time.Millisecond)}
}

// delayTrace describes an open-loop trace: a packet of size bytes every interval, whose one-way
// delay is base + extra(i).
type delayTrace struct {
	interval time.Duration
	size     int
	base     time.Duration
	extra    func(i int) time.Duration
}

func (d delayTrace) packet(i int) cc.PacketResult {
	send := time.Duration(i) * d.interval
	return cc.PacketResult{SeqNo: int64(i), SendTime: send, Size: d.size, Arrival: send + d.base + d.extra(i)}
}

func flat(int) time.Duration { return 0 }

// ramp adds step of queuing delay per packet: the sender exceeds the capacity by step/interval.
func ramp(step time.Duration) func(int) time.Duration {
	return func(i int) time.Duration { return time.Duration(i) * step }
}

// feedbackReplay feeds packets [from, to) of tr to ctrl as feedback every 50 ms of arrival time,
// calling check after each feedback.
func feedbackReplay(ctrl cc.RateController, tr delayTrace, from, to int, check func(now time.Duration) bool) {
	const every = 50 * time.Millisecond
	var batch []cc.PacketResult
	next := tr.packet(from).Arrival + every
	for i := from; i < to; i++ {
		p := tr.packet(i)
		if p.Arrival > next && len(batch) > 0 {
			ctrl.OnFeedback(cc.Feedback{Now: next + tr.base, Packets: batch})
			batch = batch[:0]
			if check != nil && !check(next+tr.base) {
				return
			}
			next += every
		}
		batch = append(batch, p)
	}
}

// receiverReplay feeds packets [from, to) of tr to r one by one.
func receiverReplay(r *Receiver, tr delayTrace, from, to int, check func(i int) bool) {
	for i := from; i < to; i++ {
		p := tr.packet(i)
		r.OnPacket(cc.ReceivedPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Arrival: p.Arrival, Size: p.Size})
		if check != nil && !check(i) {
			return
		}
	}
}
