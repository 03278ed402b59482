package bwe

import (
	"time"

	"github.com/pion/rtcp"
)

// ntpEpochOffset is the number of seconds from 1900 (NTP's epoch) to 1970 (Unix's).
const ntpEpochOffset = 2208988800

// ntpMiddle32 is the middle 32 bits of the NTP timestamp of t: the unit RTCP's LSR and DLSR use
// (1/65536 s).
func ntpMiddle32(t time.Time) uint32 {
	secs := uint64(t.Unix() + ntpEpochOffset)
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	return uint32((secs<<32 | frac) >> 16)
}

// rttFromReport computes the round-trip time a reception report gives (RFC 3550 §6.4.1): the
// time now minus the time our sender report left (LSR) minus how long the peer held it (DLSR).
// It reports false when the peer has not received a sender report yet or the result is not
// plausible.
func rttFromReport(now time.Time, r rtcp.ReceptionReport) (time.Duration, bool) {
	if r.LastSenderReport == 0 {
		return 0, false
	}
	units := ntpMiddle32(now) - r.LastSenderReport - r.Delay
	if units >= 1<<31 { // negative: clocks or reports out of order
		return 0, false
	}
	rtt := time.Duration(uint64(units) * uint64(time.Second) >> 16)
	if rtt > time.Minute {
		return 0, false
	}
	return rtt, true
}
