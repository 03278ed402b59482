package bwe

import (
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/cc"
)

// twccReferenceUnit is the unit of the 24-bit reference time in a TWCC feedback packet.
const twccReferenceUnit = 64 * time.Millisecond

// decodeTWCC appends one cc.PacketResult per packet that fb reports and the history remembers.
// Arrival times are the feedback's reference time plus the running receive deltas, so arrivals of
// successive feedback packets share one receiver clock. The base sequence number is unwrapped with
// u so that feedback keeps matching the 64-bit numbers the history was filled with.
func decodeTWCC(out []cc.PacketResult, fb *rtcp.TransportLayerCC, u *seqUnwrapper, h *sendHistory) []cc.PacketResult {
	seq := u.unwrap(fb.BaseSequenceNumber)
	arrival := time.Duration(fb.ReferenceTime) * twccReferenceUnit
	deltas := fb.RecvDeltas
	remaining := int(fb.PacketStatusCount)
	next := func(symbol uint16) {
		if remaining <= 0 {
			return
		}
		remaining--
		switch symbol {
		case rtcp.TypeTCCPacketReceivedSmallDelta, rtcp.TypeTCCPacketReceivedLargeDelta:
			if len(deltas) == 0 {
				// A malformed packet announces more receptions than it has deltas: stop here.
				remaining = 0
				return
			}
			arrival += time.Duration(deltas[0].Delta) * time.Microsecond
			deltas = deltas[1:]
			out = h.appendResult(out, seq, arrival, false)
		default:
			out = h.appendResult(out, seq, 0, true)
		}
		seq++
	}
	for _, chunk := range fb.PacketChunks {
		switch c := chunk.(type) {
		case *rtcp.RunLengthChunk:
			for i := 0; i < int(c.RunLength) && remaining > 0; i++ {
				next(c.PacketStatusSymbol)
			}
		case *rtcp.StatusVectorChunk:
			for _, s := range c.SymbolList {
				next(s)
			}
		}
	}
	// Keep the unwrapper at the highest number the feedback covered, so the next base is near it.
	if seq > u.last {
		u.last = seq - 1
	}
	return out
}
