package bwe

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/rtcpview"
)

// twccReferenceUnit is the unit of the 24-bit reference time in a TWCC feedback packet.
const twccReferenceUnit = 64 * time.Millisecond

// decodeTWCC appends one cc.PacketResult per packet that fb reports and the history remembers.
// Arrival times are the feedback's reference time plus the running receive deltas, so arrivals of
// successive feedback packets share one receiver clock. The base sequence number is unwrapped with
// u so that feedback keeps matching the 64-bit numbers the history was filled with. fb is a raw
// view (internal/rtcpview, validated whole when parsed): nothing is allocated.
func decodeTWCC(out []cc.PacketResult, fb *rtcpview.TWCC, u *cc.SeqUnwrapper, h *sendHistory) []cc.PacketResult {
	seq := u.Unwrap(fb.BaseSeq)
	// The 24-bit reference time read unsigned, as Pion and libwebrtc's feedback adapter do: only
	// differences between arrivals matter, and the unwrapped value keeps them continuous.
	arrival := time.Duration(uint32(fb.ReferenceTime)&0xffffff) * twccReferenceUnit
	st := fb.Statuses()
	for s, ok := st.Next(); ok; s, ok = st.Next() {
		if s.Received {
			arrival += s.Delta
			out = h.appendResult(out, seq, arrival, false)
		} else {
			out = h.appendResult(out, seq, 0, true)
		}
		seq++
	}
	// Keep the unwrapper at the highest number the feedback covered, so the next base is near it.
	u.Advance(seq - 1)
	return out
}
