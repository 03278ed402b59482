package cc

import "time"

// RateController is a sender-side, rate-based congestion controller driven by per-packet feedback.
// Methods are not safe for concurrent use; callers serialise them.
type RateController interface {
	// OnPacketSent records a packet leaving the pacer (used for application-limited detection and
	// probing; controllers that need nothing from it ignore it).
	OnPacketSent(p SentPacket)
	// OnFeedback processes one feedback message.
	OnFeedback(fb Feedback)
	// OnRTT gives a round-trip-time sample (for example from RTCP RR/DLSR).
	OnRTT(now, rtt time.Duration)
	// OnTick advances time without feedback: timers such as probe scheduling and feedback
	// timeouts run here. Call it every 25–100 ms.
	OnTick(now time.Duration)
	// TargetRate is the rate the encoder should produce.
	TargetRate() Bitrate
	// PacingRate is the rate at which the pacer should drain its queue.
	PacingRate() Bitrate
	// State is a snapshot for display and logs.
	State() State
}

// Prober is implemented by rate controllers that probe for bandwidth. The pacer calls NextProbe
// before sending media; each returned cluster is handed out once. The pacer sends the cluster (media
// and padding) at its rate, tags every packet with its ID (SentPacket.ProbeCluster) and reports the
// tag back with the packet's feedback (PacketResult.ProbeCluster): that is how the controller
// measures what the path carried at that rate.
type Prober interface {
	NextProbe(now time.Duration) (ProbeCluster, bool)
}

// ProbeRequester is implemented by probing controllers that also probe when the application asks:
// RequestProbe queues a cluster at rate (handed out by NextProbe) when rate is above the current
// estimate, and does nothing otherwise. An application that wants to send more than the estimate
// allows (a video layer above it) asks for a probe rather than sending more and waiting for the
// estimate to grow by itself.
type ProbeRequester interface {
	RequestProbe(now time.Duration, rate Bitrate)
}

// ReceiverEstimator runs where the media arrives and sees every received packet. What it sends
// back (a REMB value, a NADA report) depends on the algorithm; see gcc.Receiver and nada.Receiver.
type ReceiverEstimator interface {
	OnPacket(p ReceivedPacket)
	State() State
}

// WindowController is a window-based congestion controller. The caller's transport owns sequence
// numbers and retransmissions; the controller owns the congestion window, the slow-start
// threshold, fast-retransmit and recovery decisions, and the retransmission timeout.
//
// Call OnAck for every ack, duplicates included (Acked == 0): the controller counts duplicates and
// answers true when the transport should retransmit the first unacknowledged segment (the third
// duplicate ack, or a NewReno partial ack). A transport that detects losses itself (SACK, RACK)
// calls OnLoss instead; both may be mixed, and a loss reported during recovery is ignored.
type WindowController interface {
	OnAck(a Ack) (retransmit bool)
	// OnLoss reports a loss detected by the transport; inFlight is FlightSize at detection.
	OnLoss(now time.Duration, inFlight int)
	// OnTimeout reports that the retransmission timer (RTO) expired.
	OnTimeout(now time.Duration, inFlight int)
	// Cwnd is the congestion window in bytes.
	Cwnd() int
	// RTO is the current retransmission timeout (RFC 6298, with backoff).
	RTO() time.Duration
	// PacingRate is a pacing rate derived from the window and the smoothed RTT; 0 before the first
	// RTT sample (send unpaced).
	PacingRate() Bitrate
	State() State
}
