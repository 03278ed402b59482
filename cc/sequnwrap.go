package cc

// SeqUnwrapper extends 16-bit sequence numbers (RTP's, or transport-wide ones) to the monotonic
// int64 SeqNo of ReceivedPacket and PacketResult. The first value is taken as it is; later values
// are placed at the nearest point to the previous one, so reordering by less than half the cycle
// (32768) never looks like a wrap.
type SeqUnwrapper struct {
	last    int64
	started bool
}

// Unwrap extends one sequence number.
func (u *SeqUnwrapper) Unwrap(v uint16) int64 {
	if !u.started {
		u.last, u.started = int64(v), true
		return u.last
	}
	u.last += int64(int16(v - uint16(u.last)))
	return u.last
}

// Advance moves the unwrapper up to n, if it is behind, so that the next value is placed near n:
// for numbers that were covered without being unwrapped one by one (a feedback packet's run).
func (u *SeqUnwrapper) Advance(n int64) {
	if !u.started || n > u.last {
		u.last, u.started = n, true
	}
}
