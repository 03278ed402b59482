package bwe

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// historySize is the number of packets remembered for matching feedback: 2^12 packets is 2.7 s at
// 1500 packets per second (a 15 Mbit/s subscriber), many feedback intervals (100 ms) longer than any
// feedback is worth waiting for, and keeps the history at 96 KiB per PeerConnection (it was the
// largest item of a subscriber's memory at 2^14 slots).
const historySize = 1 << 12

// sentRecord is what the sender remembers of one packet until its feedback arrives (24 bytes).
type sentRecord struct {
	sendTime time.Duration
	seq      uint32 // low 32 bits of the unwrapped transport-wide sequence number
	cluster  int32  // probe cluster the packet belonged to (0: none)
	size     uint16
	used     bool
	reported reportState
}

// reportState is what feedback has said about a packet so far.
type reportState uint8

const (
	notReported reportState = iota
	reportedLost
	reportedReceived
)

// sendHistory is a fixed-slot ring of sent packets indexed by transport-wide sequence number. It
// allocates once, at creation; recording and lookup never allocate.
type sendHistory struct {
	slots [historySize]sentRecord
}

func newSendHistory() *sendHistory { return &sendHistory{} }

func (h *sendHistory) add(seq int64, sendTime time.Duration, size int, cluster int) {
	h.slots[seq&(historySize-1)] = sentRecord{seq: uint32(seq), sendTime: sendTime, size: uint16(min(size, 0xffff)), cluster: int32(cluster), used: true}
}

// holds reports whether r is the record of seq (not an empty slot or an older packet's).
func (r *sentRecord) holds(seq int64) bool { return r.used && r.seq == uint32(seq) }

// get returns the record of seq, or false when it was never sent or has been overwritten.
func (h *sendHistory) get(seq int64) (sentRecord, bool) {
	r := h.slots[seq&(historySize-1)]
	return r, r.holds(seq)
}

// appendResult joins one feedback entry with the send history. Entries for packets the history no
// longer holds are skipped, since a controller cannot use an arrival without its send time. So are
// repeated reports, as libwebrtc's TransportFeedbackAdapter drops them: a receiver that sees a
// packet out of order sends feedback for the whole range from it again (Chrome's and Pion's
// feedback generators both do), and a packet counted twice would count twice in the acknowledged
// rate and the loss. A packet reported lost and later received is passed on once more, as received.
func (h *sendHistory) appendResult(out []cc.PacketResult, seq int64, arrival time.Duration, lost bool) []cc.PacketResult {
	r := &h.slots[seq&(historySize-1)]
	if !r.holds(seq) || r.reported == reportedReceived || (lost && r.reported == reportedLost) {
		return out
	}
	r.reported = reportedReceived
	if lost {
		r.reported = reportedLost
	}
	return append(out, cc.PacketResult{SeqNo: seq, SendTime: r.sendTime, Size: int(r.size), ProbeCluster: int(r.cluster), Arrival: arrival, Lost: lost})
}
