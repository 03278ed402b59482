package sim

import "time"

// PacketKind says what a packet carries.
type PacketKind uint8

// Packet kinds.
const (
	KindMedia    PacketKind = iota // RTP media (or padding/probe) packet
	KindFeedback                   // per-packet transport feedback for media
	KindData                       // TCP or LEDBAT data segment
	KindAck                        // TCP or LEDBAT acknowledgement
)

// Report is one packet's entry in a media feedback packet.
type Report struct {
	Seq     int64
	Arrival time.Duration // zero when Lost
	Lost    bool
	CE      bool
}

// Packet is a simulated packet. Packets come from the Sim's pool and go back
// to it when delivered or dropped, so fields are reset on reuse; slices keep
// their capacity.
type Packet struct {
	Kind  PacketKind
	Stats *FlowStats // the flow this packet is accounted to; nil for none
	route *Route
	hop   int

	Size   int           // bytes on the wire (network layer)
	Seq    int64         // sequence number (packets for media, segments for TCP)
	SentAt time.Duration // when the sender emitted it
	Queued time.Duration // time spent waiting in queues so far
	ECT    bool          // ECN-capable transport
	CE     bool          // congestion experienced (set by a marking link)

	// Transport fields (KindData and KindAck).
	Ack        int64         // cumulative ack: next expected segment
	Sack       int64         // the out-of-order segment that triggered this ACK (a SACK block), or 0
	Echo       time.Duration // send time of the segment that triggered this ACK
	OWD        time.Duration // one-way delay of that segment as the receiver saw it
	ECE        bool          // ECN echo
	Retransmit bool

	// Media fields.
	Layer   int8 // simulcast/layer index
	Probe   int  // probe cluster id, 0 for ordinary media
	Padding bool
	// Managed marks the SFU's forwarded media (and padding): what a switch's reservation meter
	// lets pass, as the OVS switch matches the SFU's flows.
	Managed bool

	// Feedback fields (KindFeedback).
	Reports []Report
	// Rx carries a receive-side estimator's report when RxValid is set.
	Rx      RxReport
	RxValid bool
}

func (p *Packet) reset() {
	reports := p.Reports[:0]
	*p = Packet{Reports: reports}
}

// Route is a sequence of links ending at a receiver.
type Route struct {
	Links []*Link
	Dst   Receiver
}

// Receiver is an endpoint that packets are delivered to.
type Receiver interface {
	Receive(p *Packet)
}

// packetPool recycles packets; the simulator is single-threaded so a plain
// free list is enough.
type packetPool struct {
	free      []*Packet
	allocated int
}

func (pp *packetPool) get() *Packet {
	if n := len(pp.free); n > 0 {
		p := pp.free[n-1]
		pp.free = pp.free[:n-1]
		return p
	}
	pp.allocated++
	return &Packet{}
}

func (pp *packetPool) put(p *Packet) {
	p.reset()
	pp.free = append(pp.free, p)
}
