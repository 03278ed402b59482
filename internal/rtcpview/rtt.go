package rtcpview

import "time"

// ntpEpochOffset is the number of seconds from 1900 (NTP's epoch) to 1970 (Unix's).
const ntpEpochOffset = 2208988800

// CompactNTP is the middle 32 bits of the NTP timestamp of t: the unit of LSR and DLSR in
// reception reports (1/65536 s).
func CompactNTP(t time.Time) uint32 {
	secs := uint64(t.Unix() + ntpEpochOffset)
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	return uint32((secs<<32 | frac) >> 16)
}

// RTT is the round-trip time the block gives when it arrives at now (RFC 3550 §6.4.1): now minus
// the time the sender report it refers to left (LSR) minus how long the peer held it (DLSR). It
// reports false when the peer has not received a sender report yet or the result is not plausible
// (negative, or over a minute).
func (b ReportBlock) RTT(now time.Time) (time.Duration, bool) {
	if b.LastSR == 0 {
		return 0, false
	}
	units := CompactNTP(now) - b.LastSR - b.DelaySinceLSR
	if units >= 1<<31 { // negative: clocks or reports out of order
		return 0, false
	}
	rtt := time.Duration(uint64(units) * uint64(time.Second) >> 16)
	if rtt > time.Minute {
		return 0, false
	}
	return rtt, true
}
