package client

import (
	"sync"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// echoRing is how many sent payloads an Echo remembers: 5 s of 20 ms frames, longer than any
// round trip a working call has.
const echoRing = 256

// Echo matches what comes back from an echo service against what was sent. The server rewrites
// the RTP header (SSRC, sequence numbers, timestamps) on the way back, but not the payload: a
// received payload identical to one sent in the last echoRing packets is the caller's own audio,
// and the time since it was sent is the round trip through the server and the echo service.
// Sent and Heard allocate nothing.
type Echo struct {
	mu   sync.Mutex
	ring [echoRing]echoEntry
	next int
	c    EchoCounts
}

type echoEntry struct {
	hash uint64
	at   time.Duration
	used bool
}

// EchoCounts are an Echo's running totals.
type EchoCounts struct {
	// Sent payloads, received packets, and received packets whose payload was one sent.
	Sent, Received, Matched uint64
	// Round trips of the matched packets: sum (for the mean) and maximum.
	RTTSum, RTTMax time.Duration
	// FirstMatch is when the first echoed packet arrived (the run's clock), 0 before.
	FirstMatch time.Duration
}

// Sent records a payload sent at at.
func (e *Echo) Sent(payload []byte, at time.Duration) {
	h := payloadHash(payload)
	e.mu.Lock()
	e.ring[e.next] = echoEntry{hash: h, at: at, used: true}
	e.next = (e.next + 1) % echoRing
	e.c.Sent++
	e.mu.Unlock()
}

// Heard matches one received RTP packet that arrived at at.
func (e *Echo) Heard(pkt []byte, at time.Duration) {
	h, err := rtpstats.ParseHeader(pkt)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.c.Received++
	if err != nil || h.PayloadOffset >= len(pkt)-h.Padding {
		return
	}
	sum := payloadHash(pkt[h.PayloadOffset : len(pkt)-h.Padding])
	for i := 1; i <= echoRing; i++ { // newest first: a repeated payload matches its latest sending
		ent := &e.ring[(e.next-i+echoRing)%echoRing]
		if !ent.used {
			return
		}
		if ent.hash != sum {
			continue
		}
		rtt := at - ent.at
		e.c.Matched++
		e.c.RTTSum += rtt
		e.c.RTTMax = max(e.c.RTTMax, rtt)
		if e.c.FirstMatch == 0 {
			e.c.FirstMatch = at
		}
		return
	}
}

// Counts returns the running totals.
func (e *Echo) Counts() EchoCounts {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.c
}

// payloadHash is FNV-1a, 64 bits (hash/fnv would allocate its state per call).
func payloadHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// echoWriter records every payload it passes on.
type echoWriter struct {
	w    mediasrc.Writer
	echo *Echo
	now  func() time.Duration
}

func (w echoWriter) WriteRTP(p *rtp.Packet) error {
	w.echo.Sent(p.Payload, w.now())
	return w.w.WriteRTP(p)
}
