package cc

import "time"

// SentPacket describes one packet as it leaves the sender (after the pacer).
type SentPacket struct {
	// SeqNo is the transport-wide sequence number, unwrapped by the caller to 64 bits.
	SeqNo int64
	// SendTime is the sender's clock when the packet left.
	SendTime time.Duration
	// Size is the packet's size in bytes as counted against the link (payload plus headers).
	Size int
	// ProbeCluster is the ID of the probe cluster the packet belongs to, or 0 for ordinary media.
	ProbeCluster int
}

// PacketResult is what feedback says about one packet, joined with the sender's record of it. The
// sender-side fields (SeqNo, SendTime, Size, ProbeCluster) come from the caller's send history,
// the rest from the feedback message (TWCC or RFC 8888).
type PacketResult struct {
	SeqNo        int64
	SendTime     time.Duration
	Size         int
	ProbeCluster int
	// Arrival is the receiver's clock when the packet arrived. Receiver and sender clocks need not
	// be synchronised: controllers only use differences and minima of Arrival−SendTime.
	Arrival time.Duration
	// Lost reports that the feedback listed the packet as not received; Arrival is then unused.
	Lost bool
	// CE reports an ECN Congestion Experienced mark on the packet.
	CE bool
}

// Feedback is one feedback message as the sender sees it.
type Feedback struct {
	// Now is the sender's clock when the feedback arrived.
	Now time.Duration
	// Packets are the packets the message reports, in any order. Controllers copy what they keep:
	// the caller may reuse the slice after the call returns.
	Packets []PacketResult
}

// ReceivedPacket is one packet as a receive-side estimator sees it.
type ReceivedPacket struct {
	// SeqNo is the packet's sequence number, unwrapped to 64 bits; gaps count as losses.
	SeqNo int64
	// SendTime is the sender's timestamp (for example abs-send-time, unwrapped), in the sender's
	// clock.
	SendTime time.Duration
	// Arrival is the receiver's clock when the packet arrived.
	Arrival time.Duration
	// Size is the packet's size in bytes.
	Size int
	// CE reports an ECN Congestion Experienced mark.
	CE bool
}

// Ack is one acknowledgement as a window-based controller sees it.
type Ack struct {
	// Now is the sender's clock when the ack arrived.
	Now time.Duration
	// Acked is the number of bytes this ack newly acknowledges cumulatively; 0 marks a duplicate
	// ack.
	Acked int
	// InFlight is FlightSize when the ack arrived, before removing Acked: the bytes sent but not
	// yet cumulatively acknowledged (snd_nxt − snd_una), lost ones included.
	InFlight int
	// RTT is the round-trip sample this ack gives, or 0 when it gives none (Karn's rule).
	RTT time.Duration
	// OneWayDelay is the one-way delay of the acknowledged segment (receive time minus the sender
	// timestamp it echoes), or 0 when unknown. Only delay-based controllers use it.
	OneWayDelay time.Duration
	// CE reports that the ack echoes an ECN Congestion Experienced mark (ECE).
	CE bool
}

// ProbeCluster asks the sender's pacer for a burst of packets at a given rate; the controller
// measures the rate at which they arrive. The pacer sends at least MinPackets packets and MinBytes
// bytes at Rate, tags each with ID (SentPacket.ProbeCluster), and may use padding or media.
type ProbeCluster struct {
	ID         int
	Rate       Bitrate
	MinPackets int
	MinBytes   int
}
