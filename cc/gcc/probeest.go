package gcc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// probeEstimator turns the feedback of a probe cluster into a capacity estimate, following
// libwebrtc's ProbeBitrateEstimator:
//
//   - a cluster counts once at least 80 % of its packets and bytes were received;
//   - send and receive intervals must be positive and under 1 s, and the receive/send rate ratio
//     at most 2;
//   - the send rate leaves out the last packet sent and the receive rate the first packet
//     received, since the intervals do not include their transmission;
//   - the result is min(send, receive), or 0.95 × receive when receive < 0.9 × send (the link
//     is saturated: settle a little below it);
//   - a cluster more than 20 % of whose reported packets were lost gives no result (strata's
//     addition): the received rest of it no longer says at what rate it was sent, be it a path
//     that drops (the loss and delay controllers answer that) or a receiver that never recorded
//     the padding (Pion's, before its RTX reader starts), whose cluster would read as the media
//     sent meanwhile, far below the probe, and drag the estimate down;
//   - the result never exceeds the cluster's target rate. libwebrtc's pacer spaces a cluster's
//     packets evenly; a sender that pads on a coarser clock (strata's allocator, every 10 ms)
//     sends bursts whose first-to-last interval is shorter than the time they stand for, which
//     overstates both rates. A probe shows that the path carries the rate it was sent at, no more.
type probeEstimator struct {
	clusters [probeQueueLen]probeAggregate
	next     int
	result   float64
	has      bool
}

type probeAggregate struct {
	id                          int
	packets, bytes              int
	firstSend, lastSend         time.Duration
	firstRecv, lastRecv         time.Duration
	lastSendSize, firstRecvSize int
	minPackets, minBytes        int
	rate                        float64 // the cluster's target, bit/s (0: no cap)
	lost                        int
}

const (
	maxLostProbeRatio     = 0.20
	minReceivedProbeRatio = 0.80
	maxProbeInterval      = time.Second
	maxValidProbeRatio    = 2.0
	saturatedRatio        = 0.9
	saturatedUtilisation  = 0.95
)

func (e *probeEstimator) find(c cc.ProbeCluster) *probeAggregate {
	for i := range e.clusters {
		if e.clusters[i].id == c.ID {
			return &e.clusters[i]
		}
	}
	a := &e.clusters[e.next]
	e.next = (e.next + 1) % len(e.clusters)
	*a = probeAggregate{id: c.ID, minPackets: c.MinPackets, minBytes: c.MinBytes, rate: c.Rate.Bps()}
	return a
}

// add folds in one received probe packet of cluster c.
func (e *probeEstimator) add(c cc.ProbeCluster, p *cc.PacketResult) {
	a := e.find(c)
	if a.packets == 0 {
		a.firstSend, a.lastSend, a.firstRecv, a.lastRecv = p.SendTime, p.SendTime, p.Arrival, p.Arrival
		a.lastSendSize, a.firstRecvSize = p.Size, p.Size
	}
	a.packets++
	a.bytes += p.Size
	if p.SendTime < a.firstSend {
		a.firstSend = p.SendTime
	}
	if p.SendTime >= a.lastSend {
		a.lastSend, a.lastSendSize = p.SendTime, p.Size
	}
	if p.Arrival < a.firstRecv {
		a.firstRecv, a.firstRecvSize = p.Arrival, p.Size
	}
	a.lastRecv = max(a.lastRecv, p.Arrival)
	e.evaluate(a)
}

// addLost counts a packet of cluster c that feedback reported lost.
func (e *probeEstimator) addLost(c cc.ProbeCluster) {
	e.find(c).lost++
}

func (e *probeEstimator) evaluate(a *probeAggregate) {
	if float64(a.lost) > maxLostProbeRatio*float64(a.lost+a.packets) {
		return
	}
	if float64(a.packets) < minReceivedProbeRatio*float64(a.minPackets) ||
		float64(a.bytes) < minReceivedProbeRatio*float64(a.minBytes) {
		return
	}
	sendInterval := a.lastSend - a.firstSend
	recvInterval := a.lastRecv - a.firstRecv
	if sendInterval <= 0 || sendInterval > maxProbeInterval || recvInterval <= 0 || recvInterval > maxProbeInterval {
		return
	}
	send := float64(a.bytes-a.lastSendSize) * 8 / sendInterval.Seconds()
	recv := float64(a.bytes-a.firstRecvSize) * 8 / recvInterval.Seconds()
	if send <= 0 || recv <= 0 || recv/send > maxValidProbeRatio {
		return
	}
	res := min(send, recv)
	if recv < saturatedRatio*send {
		res = saturatedUtilisation * recv
	}
	if a.rate > 0 {
		res = min(res, a.rate)
	}
	e.result, e.has = res, true
}

// take returns the latest result once.
func (e *probeEstimator) take() (float64, bool) {
	r, ok := e.result, e.has
	e.has = false
	return r, ok
}
