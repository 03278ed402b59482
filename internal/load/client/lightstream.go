package client

import (
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// handedSlots remembers the last packets the tap gave Pion, by sequence number modulo its size,
// so the track reader knows what the tap already counted (and when each packet arrived).
const handedSlots = 64

// nackSlots bounds the sequence numbers a stream waits for; nackTries is how often each is asked
// for; nackAfter is how long a gap waits before its first NACK (reordering fills most sooner);
// nackBurst bounds the sequence numbers one NACK asks for, so heavy loss (an overloaded server or
// machine) does not turn into a storm of retransmission requests that loads the server more.
const (
	nackSlots = 64
	nackTries = 3
	nackAfter = 20 * time.Millisecond
	nackBurst = 8
)

// lightState is a stream's counting at the socket. It is guarded by the Stream's lock.
type lightState struct {
	ssrc     uint32
	counting bool // the tap counts the packets (the stream is decodable and the overhead known)
	overhead int  // SRTP's bytes after the RTP packet (the authentication tag); -1 unknown
	seen     uint64
	handed   [handedSlots]handedPacket

	// gaps for NACKs
	seqSeen  bool
	lastSeq  uint16
	missing  [nackSlots]missingPacket
	nMissing int
	nacked   uint64

	// reception reports
	prevExpected, prevReceived uint64
	srNTP                      uint32        // the middle 32 bits of the last sender report's NTP time
	srAt                       time.Duration // when it arrived; 0 for none

	sampled, verified, badSamples uint64
}

type handedPacket struct {
	valid  bool
	sample bool // counted by the tap already: the reader only verifies it
	seq    uint16
	size   int
	at     time.Duration
}

type missingPacket struct {
	seq   uint16
	since time.Duration
	tries uint8
}

// atTap accounts a packet read from the socket and reports whether the tap keeps it (true) or
// gives it to Pion. Allocation-free.
func (s *Stream) atTap(h rtpstats.Header, size int, at time.Duration) (keep bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.light
	l.trackGap(h.Seq, at)
	l.seen++
	if !l.counting {
		l.handed[h.Seq%handedSlots] = handedPacket{valid: true, seq: h.Seq, size: size, at: at}
		return false
	}
	s.stats.ObserveHeader(h, size-l.overhead, at)
	if l.seen%sampleEvery == 0 {
		l.sampled++
		l.handed[h.Seq%handedSlots] = handedPacket{valid: true, sample: true, seq: h.Seq, size: size, at: at}
		return false
	}
	return true
}

// fromPion accounts a packet the track reader got from Pion (decrypted): a sample the tap
// counted, which is only verified; a packet the tap gave on before counting (counted here, at
// the time it reached the socket); or one the tap never saw as such (an RTX repair), counted now.
// Once the stream is decodable and SRTP's overhead known, the tap counts from the next packet.
func (s *Stream) fromPion(pkt []byte, now time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := rtpstats.ParseHeader(pkt)
	if err != nil {
		s.bad++
		return
	}
	l := &s.light
	e := &l.handed[h.Seq%handedSlots]
	if e.valid && e.seq == h.Seq {
		e.valid = false
		if l.overhead < 0 {
			l.overhead = e.size - len(pkt)
		}
		if e.sample {
			if verifyPayload(s.Kind, pkt[h.PayloadOffset:len(pkt)-h.Padding]) {
				l.verified++
			} else {
				l.badSamples++
			}
			return
		}
		now = e.at
	} else {
		l.repaired(h.Seq)
	}
	if s.stats.Observe(pkt, now) != nil {
		s.bad++
	}
	if !l.counting && l.overhead >= 0 && s.stats.Decodable() {
		l.counting = true
	}
}

// verifyPayload checks a decrypted sample: a VP8 payload descriptor that parses (and, on a
// keyframe's first packet, the VP8 start code), or an Opus packet with a TOC byte. A video packet
// of padding alone (a bandwidth probe) carries nothing to check.
func verifyPayload(kind string, p []byte) bool {
	if kind != "video" {
		return len(p) > 0
	}
	if len(p) == 0 {
		return true
	}
	start, key, ok := rtpstats.VP8FrameStart(p)
	if !ok {
		return false
	}
	if !start || !key {
		return true
	}
	// The descriptor's length, then the 3-byte frame tag and the keyframe start code 9d 01 2a.
	i := 1
	if p[0]&0x80 != 0 {
		x := p[1]
		i = 2
		if x&0x80 != 0 {
			if p[i]&0x80 != 0 {
				i += 2
			} else {
				i++
			}
		}
		if x&0x40 != 0 {
			i++
		}
		if x&0x30 != 0 {
			i++
		}
	}
	return len(p) >= i+6 && p[i+3] == 0x9d && p[i+4] == 0x01 && p[i+5] == 0x2a
}

// trackGap notes the sequence numbers a packet skipped (for NACKs) or the one it fills.
func (l *lightState) trackGap(seq uint16, at time.Duration) {
	if !l.seqSeen {
		l.seqSeen, l.lastSeq = true, seq
		return
	}
	d := seq - l.lastSeq
	switch {
	case d == 0:
	case d < 0x8000:
		if d <= nackSlots { // a larger jump is a new source, not a loss to repair
			for m := l.lastSeq + 1; m != seq && l.nMissing < nackSlots; m++ {
				l.missing[l.nMissing] = missingPacket{seq: m, since: at}
				l.nMissing++
			}
		}
		l.lastSeq = seq
	default:
		l.repaired(seq)
	}
}

// repaired forgets a missing sequence number that arrived.
func (l *lightState) repaired(seq uint16) {
	for i := 0; i < l.nMissing; i++ {
		if l.missing[i].seq == seq {
			l.nMissing--
			l.missing[i] = l.missing[l.nMissing]
			return
		}
	}
}

// nack returns the sequence numbers to ask for now: at most nackBurst, those asked for least
// often first, each at most nackTries times (then it is forgotten).
func (s *Stream) nack(now time.Duration, into []uint16) []uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.light
	start := len(into)
	for try := uint8(0); try < nackTries; try++ {
		for i := 0; i < l.nMissing && len(into)-start < nackBurst; i++ {
			if m := &l.missing[i]; m.tries == try && now-m.since >= nackAfter {
				into = append(into, m.seq)
				l.nacked++
				m.tries = nackTries + try + 1 // asked this time; restored below
			}
		}
	}
	for i := 0; i < l.nMissing; {
		m := &l.missing[i]
		if m.tries > nackTries {
			m.tries -= nackTries // the try just made
		}
		if m.tries >= nackTries {
			l.nMissing--
			l.missing[i] = l.missing[l.nMissing]
			continue
		}
		i++
	}
	return into
}

func (s *Stream) ssrcOf() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.light.ssrc
}

// noteSenderReport keeps what a reception report needs of a sender report.
func (s *Stream) noteSenderReport(sr *rtcp.SenderReport, at time.Duration) {
	s.mu.Lock()
	s.light.srNTP = uint32(sr.NTPTime >> 16)
	s.light.srAt = at
	s.mu.Unlock()
}

// receptionReport builds the stream's RTCP reception report (RFC 3550 §6.4.1) and starts a new
// interval for the fraction lost; ok is false before any packet.
func (s *Stream) receptionReport(now time.Duration) (rtcp.ReceptionReport, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.light
	rec := s.stats.Reception()
	if rec.Received == 0 {
		return rtcp.ReceptionReport{}, false
	}
	var lost uint64
	if rec.Expected > rec.Received {
		lost = rec.Expected - rec.Received
	}
	rr := rtcp.ReceptionReport{SSRC: l.ssrc, LastSequenceNumber: rec.ExtHighest, Jitter: rec.Jitter,
		TotalLost: uint32(min(lost, 1<<23-1))}
	expected, received := rec.Expected-l.prevExpected, rec.Received-l.prevReceived
	if expected > received && expected > 0 {
		rr.FractionLost = uint8((expected - received) * 256 / expected)
	}
	l.prevExpected, l.prevReceived = rec.Expected, rec.Received
	if l.srAt > 0 {
		rr.LastSenderReport = l.srNTP
		rr.Delay = uint32((now - l.srAt) * 65536 / time.Second)
	}
	return rr, true
}

// LightCounts are a light stream's sampling figures.
type LightCounts struct {
	// Swallowed is filled by the subscriber (per PeerConnection).
	Sampled, Verified, BadSamples, NACKed uint64
}

// LightCounts returns the stream's sampling figures.
func (s *Stream) LightCounts() LightCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return LightCounts{Sampled: s.light.sampled, Verified: s.light.verified, BadSamples: s.light.badSamples, NACKed: s.light.nacked}
}
