package bwe

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/ring"
)

// The history keeps every packet sent in the last historyHorizon, in as few slots as that takes:
// it starts at historyMinSlots (6 KiB: 5 s of a 50 packet/s audio-only PeerConnection, 1.6 s of a
// 1.2 Mbit/s video subscriber) and doubles, up to historySize, whenever a packet would overwrite one
// sent less than historyHorizon ago. Feedback comes every 50-100 ms plus a round trip, so a packet
// not reported within a second is not worth matching (the estimators use what was sent in the last
// 500-750 ms); 2^12 slots is 2.7 s at 1500 packets per second (a 15 Mbit/s subscriber) and bounds
// the history at 96 KiB per PeerConnection. Allocated once at that bound, it was the largest item
// of a subscriber's memory (docs/PERFORMANCE.md); a subscriber hearing 19 others in an audio
// conference (950 packets/s) now holds 24 KiB.
const (
	historySize     = 1 << 12
	historyMinSlots = 1 << 8
	historyHorizon  = time.Second
)

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

// Stamp places a record in the history's window.
func (r sentRecord) Stamp() (uint32, time.Duration, bool) { return r.seq, r.sendTime, r.used }

// sendHistory is a window of sent packets indexed by transport-wide sequence number (ring.Window).
// Lookups never allocate; recording allocates only when the window doubles (at most
// log2(historySize/historyMinSlots) times in a PeerConnection's life).
type sendHistory struct {
	slots ring.Window[sentRecord]
}

func newSendHistory() *sendHistory {
	return &sendHistory{slots: ring.NewWindow[sentRecord](historyMinSlots, historySize, historyHorizon)}
}

func (h *sendHistory) add(seq int64, sendTime time.Duration, size int, cluster int) {
	h.slots.Put(sentRecord{seq: uint32(seq), sendTime: sendTime, size: uint16(min(size, 0xffff)), cluster: int32(cluster), used: true})
}

// holds reports whether r is the record of seq (not an empty slot or an older packet's).
func (r *sentRecord) holds(seq int64) bool { return r.used && r.seq == uint32(seq) }

// get returns the record of seq, or false when it was never sent or has been overwritten.
func (h *sendHistory) get(seq int64) (sentRecord, bool) {
	r := *h.slots.Slot(uint32(seq))
	return r, r.holds(seq)
}

// appendResult joins one feedback entry with the send history. Entries for packets the history no
// longer holds are skipped, since a controller cannot use an arrival without its send time. So are
// repeated reports, as libwebrtc's TransportFeedbackAdapter drops them: a receiver that sees a
// packet out of order sends feedback for the whole range from it again (Chrome's and Pion's
// feedback generators both do), and a packet counted twice would count twice in the acknowledged
// rate and the loss. A packet reported lost and later received is passed on once more, as received.
func (h *sendHistory) appendResult(out []cc.PacketResult, seq int64, arrival time.Duration, lost bool) []cc.PacketResult {
	r := h.slots.Slot(uint32(seq))
	if !r.holds(seq) || r.reported == reportedReceived || (lost && r.reported == reportedLost) {
		return out
	}
	r.reported = reportedReceived
	if lost {
		r.reported = reportedLost
	}
	return append(out, cc.PacketResult{SeqNo: seq, SendTime: r.sendTime, Size: int(r.size), ProbeCluster: int(r.cluster), Arrival: arrival, Lost: lost})
}
