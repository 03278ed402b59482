package cctest

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Fuzz inputs are decoded into controller calls with arbitrary, unsorted, repeated and jumping
// times. Times stay within ±2^59 ns (about 18 years) of the epoch so that differences of two of
// them cannot overflow int64; every other value is taken as it comes.

var timeScales = [4]time.Duration{time.Microsecond, time.Millisecond, time.Second, 1 << 28}

type reader struct {
	data []byte
}

func (r *reader) bytes(n int) []byte {
	if len(r.data) < n {
		b := make([]byte, n)
		copy(b, r.data)
		r.data = nil
		return b
	}
	b := r.data[:n]
	r.data = r.data[n:]
	return b
}

func (r *reader) done() bool { return len(r.data) == 0 }

func (r *reader) u8() uint8 { return r.bytes(1)[0] }

func (r *reader) duration() time.Duration {
	b := r.bytes(5)
	v := int32(binary.LittleEndian.Uint32(b[1:]))
	return time.Duration(v) * timeScales[b[0]&3]
}

// FuzzFeedback decodes data into a sequence of feedback messages.
func FuzzFeedback(data []byte) []cc.Feedback {
	r := &reader{data: data}
	var out []cc.Feedback
	for !r.done() && len(out) < 64 {
		fb := cc.Feedback{Now: r.duration()}
		n := int(r.u8() % 48)
		for i := 0; i < n && !r.done(); i++ {
			flags := r.u8()
			fb.Packets = append(fb.Packets, cc.PacketResult{
				SeqNo:        int64(int16(binary.LittleEndian.Uint16(r.bytes(2)))),
				SendTime:     r.duration(),
				Arrival:      r.duration(),
				Size:         int(int16(binary.LittleEndian.Uint16(r.bytes(2)))),
				Lost:         flags&1 != 0,
				CE:           flags&2 != 0,
				ProbeCluster: int(flags>>4) % 4,
			})
		}
		out = append(out, fb)
	}
	return out
}

// FuzzReceived decodes data into received packets.
func FuzzReceived(data []byte) []cc.ReceivedPacket {
	r := &reader{data: data}
	var out []cc.ReceivedPacket
	for !r.done() && len(out) < 2048 {
		flags := r.u8()
		out = append(out, cc.ReceivedPacket{
			SeqNo:    int64(int16(binary.LittleEndian.Uint16(r.bytes(2)))),
			SendTime: r.duration(),
			Arrival:  r.duration(),
			Size:     int(int16(binary.LittleEndian.Uint16(r.bytes(2)))),
			CE:       flags&1 != 0,
		})
	}
	return out
}

// FuzzAcks decodes data into acks; Kind is 0 for OnAck, 1 for OnLoss, 2 for OnTimeout.
type FuzzAck struct {
	Kind int
	cc.Ack
}

// FuzzAckSequence decodes data into window-controller calls.
func FuzzAckSequence(data []byte) []FuzzAck {
	r := &reader{data: data}
	var out []FuzzAck
	for !r.done() && len(out) < 2048 {
		flags := r.u8()
		a := FuzzAck{Kind: int(flags % 8)}
		if a.Kind > 2 {
			a.Kind = 0
		}
		a.Now = r.duration()
		a.Acked = int(int16(binary.LittleEndian.Uint16(r.bytes(2))))
		a.InFlight = int(int32(binary.LittleEndian.Uint32(r.bytes(4))))
		a.RTT = r.duration()
		a.OneWayDelay = r.duration()
		a.CE = flags&8 != 0
		out = append(out, a)
	}
	return out
}

// CheckState reports the first field of s that is not finite or is negative where it must not be.
func CheckState(s cc.State) error {
	for name, v := range map[string]float64{
		"DelayGradientMs": s.DelayGradientMs, "ThresholdMs": s.ThresholdMs, "QueueDelayMs": s.QueueDelayMs,
		"SignalMs": s.SignalMs, "LossRate": s.LossRate, "RTTMs": s.RTTMs,
	} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s = %v", name, v)
		}
	}
	for name, v := range map[string]int64{
		"Target": int64(s.Target), "Pacing": int64(s.Pacing), "Received": int64(s.Received),
		"DelayBased": int64(s.DelayBased), "LossBased": int64(s.LossBased),
		"Cwnd": int64(s.Cwnd), "Ssthresh": int64(s.Ssthresh),
	} {
		if v < 0 {
			return fmt.Errorf("%s = %d < 0", name, v)
		}
	}
	if s.QueueDelayMs < 0 || s.SignalMs < 0 || s.LossRate < 0 || s.LossRate > 1 || s.ThresholdMs < 0 {
		return fmt.Errorf("out of range: %+v", s)
	}
	return nil
}

// CheckRates reports a negative rate (NaN cannot reach a Bitrate: BitrateFromFloat maps it to 0).
func CheckRates(target, pacing cc.Bitrate) error {
	if target < 0 || pacing < 0 {
		return fmt.Errorf("negative rate: target %d pacing %d", target, pacing)
	}
	return nil
}
