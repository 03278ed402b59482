package client

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
	"github.com/strata-rtc/strata/internal/load/voice"
)

// AudibleDBov is the level above which a decoded frame of the mix counts as carrying speech. The
// generator's speech is at voice.SpeechDBov; the quiet rooms of even 200 participants mixed stay
// below it (voice.NoiseDBov + 23 dB).
const AudibleDBov = -40

// ListenRate is the rate a listener decodes the mix at: wideband, the rate of the benchmark's
// rooms (a louder or quieter mix does not depend on it).
const ListenRate = 16000

// Listener decodes a received mix with libopus and sorts its frames by what they should carry at
// the moment they arrive: speech while someone else has been talking for a while, near-silence
// while nobody else has talked for a while (voice.Floor.Expect). It shows that the server's
// mix carries the talkers, not just packets.
type Listener struct {
	dec    *audio.Decoder
	pcm    []int16
	expect func(now time.Duration) voice.Expectation

	mu sync.Mutex
	c  ListenCounts
}

// ListenCounts are a listener's running totals. Levels are sums of per-frame dBov, to average.
type ListenCounts struct {
	Decoded, Errors uint64
	// While speech was expected: frames, the sum of their levels, and those above AudibleDBov.
	SpeechFrames, Audible uint64
	SpeechDBSum           float64
	// While silence was expected: frames, the sum of their levels, and those above AudibleDBov.
	SilenceFrames, SilenceAudible uint64
	SilenceDBSum                  float64
}

// NewListener decodes at ListenRate; expect says what the mix should carry at a time.
func NewListener(expect func(now time.Duration) voice.Expectation) (*Listener, error) {
	f := audio.Format{Rate: ListenRate, Channels: 1}
	dec, err := audio.NewDecoder(f)
	if err != nil {
		return nil, err
	}
	return &Listener{dec: dec, pcm: make([]int16, f.FrameLen()), expect: expect}, nil
}

// Hear decodes one RTP packet of the mix that arrived at at.
func (l *Listener) Hear(pkt []byte, at time.Duration) {
	h, err := rtpstats.ParseHeader(pkt)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || h.PayloadOffset >= len(pkt)-h.Padding {
		l.c.Errors++
		return
	}
	if err := l.dec.Decode(pkt[h.PayloadOffset:len(pkt)-h.Padding], l.pcm); err != nil {
		l.c.Errors++
		return
	}
	l.c.Decoded++
	db := voice.DBov(l.pcm)
	loud := db >= AudibleDBov
	switch l.expect(at) {
	case voice.Speech:
		l.c.SpeechFrames++
		l.c.SpeechDBSum += db
		if loud {
			l.c.Audible++
		}
	case voice.Silence:
		l.c.SilenceFrames++
		l.c.SilenceDBSum += db
		if loud {
			l.c.SilenceAudible++
		}
	}
}

// Counts returns the running totals.
func (l *Listener) Counts() ListenCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c
}
