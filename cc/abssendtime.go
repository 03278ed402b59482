package cc

import "time"

// AbsSendTimeUnwrapper turns the 24-bit abs-send-time RTP header extension (6.18 fixed-point
// seconds, wrapping every 64 s) into a monotonic time.Duration for ReceivedPacket.SendTime. The
// first value maps to its own offset within the 64 s cycle; later values are placed at the
// nearest point to the previous one, so reordering by less than 32 s never looks like a wrap.
type AbsSendTimeUnwrapper struct {
	last    int64 // last unwrapped value, in 2^-18 s units
	started bool
}

const (
	absSendTimeBits   = 24
	absSendTimeCycle  = int64(1) << absSendTimeBits
	absSendTimeFracHz = int64(1) << 18
)

// Unwrap converts one abs-send-time value; bits above the low 24 are ignored.
func (u *AbsSendTimeUnwrapper) Unwrap(v uint32) time.Duration {
	cur := int64(v) & (absSendTimeCycle - 1)
	if !u.started {
		u.last, u.started = cur, true
	} else {
		delta := (cur - u.last) & (absSendTimeCycle - 1) // forward distance in [0, cycle)
		if delta >= absSendTimeCycle/2 {
			delta -= absSendTimeCycle // closer going backwards
		}
		u.last += delta
	}
	return absSendTimeToDuration(u.last)
}

func absSendTimeToDuration(units int64) time.Duration {
	sec := units / absSendTimeFracHz
	frac := units % absSendTimeFracHz
	return time.Duration(sec)*time.Second + time.Duration(frac*int64(time.Second)/absSendTimeFracHz)
}
