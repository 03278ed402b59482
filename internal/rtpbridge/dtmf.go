package rtpbridge

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/sfu"
)

// RFC 4733 timing as Janus uses it: 100 ms digits by default, a packet every 20 ms, the end
// packet three times, 50 ms between digits, 500 ms for ','.
const (
	defaultDTMFDuration = 100 * time.Millisecond
	maxDTMFDuration     = 5 * time.Second
	dtmfPacketInterval  = 20 * time.Millisecond
	dtmfGap             = 50 * time.Millisecond
	dtmfPause           = 500 * time.Millisecond
	maxDTMFDigits       = 64
)

const dtmfDigits = "0123456789*#ABCD"

// eventOf is the RFC 4733 event code of a digit.
func eventOf(d byte) (uint8, bool) {
	i := strings.IndexByte(dtmfDigits, d)
	return uint8(i), i >= 0
}

// dtmfDetector turns the peer's telephone-events into digits: one per event, at its first end
// packet (the end is repeated).
type dtmfDetector struct {
	lastEnd  uint32
	reported bool
}

func (d *dtmfDetector) packet(ts uint32, payload []byte, clockRate uint32, report func(string, time.Duration)) {
	if len(payload) < 4 || payload[1]&0x80 == 0 || payload[0] >= uint8(len(dtmfDigits)) {
		return
	}
	if d.reported && ts == d.lastEnd {
		return
	}
	d.lastEnd, d.reported = ts, true
	if report != nil && clockRate > 0 {
		dur := time.Duration(binary.BigEndian.Uint16(payload[2:4])) * time.Second / time.Duration(clockRate)
		report(dtmfDigits[payload[0]:payload[0]+1], dur)
	}
}

func (s *Session) dtmfHandler() func(string, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onDTMF
}

// checkDigits validates a SendDTMF request.
func checkDigits(digits string, duration time.Duration) error {
	if digits == "" || len(digits) > maxDTMFDigits {
		return fmt.Errorf("invalid DTMF tones %q (1 to %d digits)", digits, maxDTMFDigits)
	}
	for i := range len(digits) {
		if _, ok := eventOf(strings.ToUpper(digits[i : i+1])[0]); !ok && digits[i] != ',' {
			return fmt.Errorf("invalid DTMF digit %q", digits[i])
		}
	}
	if duration < 0 || duration > maxDTMFDuration {
		return fmt.Errorf("invalid DTMF duration %v", duration)
	}
	return nil
}

// playDTMF sends the digits as telephone-events on the audio leg's stream.
func (l *leg) playDTMF(digits string, duration time.Duration, pt uint8) {
	rate := l.dtmfRate // durations count in the event's clock, timestamps in the media's
	for i := range len(digits) {
		if digits[i] == ',' {
			l.sleep(dtmfPause)
			continue
		}
		ev, _ := eventOf(strings.ToUpper(digits[i : i+1])[0])
		l.out.mu.Lock()
		ts := l.out.nowTS(sfu.Now())
		l.out.mu.Unlock()
		total := uint16(min(int64(duration)*int64(rate)/int64(time.Second), 0xffff))
		step := uint16(int64(dtmfPacketInterval) * int64(rate) / int64(time.Second))
		var payload [4]byte
		payload[0], payload[1] = ev, 10 // volume -10 dBm0
		for dur := step; ; dur += step {
			end := dur >= total
			if end {
				dur = total
				payload[1] |= 0x80
			}
			binary.BigEndian.PutUint16(payload[2:], dur)
			repeats := 1
			if end {
				repeats = 3
			}
			for range repeats {
				l.out.sendEvent(pt, dur == step, ts, payload[:])
			}
			if end || !l.sleep(dtmfPacketInterval) {
				break
			}
		}
		if !l.sleep(dtmfGap) {
			return
		}
	}
}

// sleep waits d unless the leg stops first.
func (l *leg) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.done:
		return false
	case <-t.C:
		return true
	}
}
