package peer

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Summary is a PeerConnection's counters summed over its streams, for the admin dashboard. Unlike
// Info it reads only strata's own atomics (and the estimator's snapshot): no GetStats, no SDP
// parsing, so a dashboard polling many PeerConnections every second costs the media path nothing
// but the counter set's lock, as the Prometheus totals do.
type Summary struct {
	// BytesIn/Out and PacketsIn/Out count RTP received and sent, retransmissions and padding included.
	BytesIn, BytesOut     uint64
	PacketsIn, PacketsOut uint64
	// NACKedIn are the sequence numbers peers asked strata for again (loss on what strata sends);
	// NACKedOut those strata asked for (loss on what it receives).
	NACKedIn, NACKedOut uint64
	// ReportedLost is the cumulative loss the peer reported about strata's streams.
	ReportedLost int64
	// RTT is the largest round-trip time of the peer's last reception reports (0: none yet).
	RTT time.Duration
	// Estimate is the send-side estimate towards the peer (0 without congestion control), and
	// FeedbackLoss the loss fraction its transport-wide feedback shows (-1 when unknown).
	Estimate     cc.Bitrate
	FeedbackLoss float64
}

// Summary reads the counters of this PeerConnection. It is safe at any time, also after Close.
func (p *Peer) Summary() Summary {
	s := Summary{FeedbackLoss: -1}
	p.counters.summarize(&s)
	if e := p.Estimator(); e != nil {
		path := e.Path()
		s.Estimate = path.Estimate
		if path.LossKnown {
			s.FeedbackLoss = path.FeedbackLoss
		}
		if s.RTT == 0 {
			s.RTT = path.RTT
		}
	}
	return s
}

func (c *counterSet) summarize(s *Summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sc := range c.in {
		s.BytesIn += sc.bytes.Load()
		s.PacketsIn += sc.packets.Load()
		s.NACKedOut += sc.nacked.Load()
	}
	for _, sc := range c.out {
		s.BytesOut += sc.bytes.Load()
		s.PacketsOut += sc.packets.Load()
		s.NACKedIn += sc.nacked.Load()
		if sc.reported.Load() {
			s.ReportedLost += sc.reportLost.Load()
			s.RTT = max(s.RTT, time.Duration(sc.rttMicros.Load())*time.Microsecond)
		}
	}
}
