package voice

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Pattern is the shape of a call's talk: at most Talkers talk at once; each talk spurt lasts
// between SpurtMin and SpurtMax, and a floor (one of the Talkers places) stays free between
// PauseMin and PauseMax before someone else takes it.
type Pattern struct {
	Talkers            int
	SpurtMin, SpurtMax time.Duration
	PauseMin, PauseMax time.Duration
	Seed               uint64
}

// DefaultPattern is three places to talk, spurts of 1.5–5 s and pauses of 0.3–2 s: on average
// about two people talk at once, and the one who speaks changes every second or two.
func DefaultPattern() Pattern {
	return Pattern{Talkers: 3, SpurtMin: 1500 * time.Millisecond, SpurtMax: 5 * time.Second,
		PauseMin: 300 * time.Millisecond, PauseMax: 2 * time.Second, Seed: 1}
}

// Validate checks the pattern.
func (p Pattern) Validate() error {
	switch {
	case p.Talkers < 0:
		return fmt.Errorf("talkers %d is negative", p.Talkers)
	case p.SpurtMin <= 0 || p.SpurtMax < p.SpurtMin:
		return fmt.Errorf("talk spurts %v…%v: need 0 < min ≤ max", p.SpurtMin, p.SpurtMax)
	case p.PauseMin < 0 || p.PauseMax < p.PauseMin:
		return fmt.Errorf("pauses %v…%v: need 0 ≤ min ≤ max", p.PauseMin, p.PauseMax)
	}
	return nil
}

// Settling times for Expect: how long a spurt must have lasted before the mix should carry it,
// and how long after the last spurt ended the mix should be quiet (the server's jitter buffer,
// 6 packets in Janus's default, and the network come in between).
const (
	SpeechSettle  = 300 * time.Millisecond
	SilenceSettle = 500 * time.Millisecond
)

// Floor decides who talks. Advance is called by one goroutine as time passes; Talking and Expect
// may be called from any.
type Floor struct {
	p       Pattern
	rng     *rand.Rand
	talking []atomic.Bool

	mu    sync.Mutex
	slots []slot
}

// slot is one place to talk: who holds it (-1: free) since when and until when, and who held it
// last and when that spurt ended.
type slot struct {
	who          int
	since, until time.Duration
	lastWho      int
	lastEnd      time.Duration
}

// NewFloor is the pattern for up to participants participants. The free places become available
// at staggered times in the first PauseMax, so talkers do not all start together.
func NewFloor(p Pattern, participants int) *Floor {
	f := &Floor{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0xf100)), talking: make([]atomic.Bool, participants)}
	for range p.Talkers {
		f.slots = append(f.slots, slot{who: -1, lastWho: -1, until: f.between(0, p.PauseMax)})
	}
	return f
}

func (f *Floor) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(f.rng.Int64N(int64(hi-lo)+1))
}

// Advance moves the pattern to now: spurts that are over end, free places whose pause is over go
// to a random participant among the first eligible who is not talking already (participants join
// in index order, so eligible is how many have joined).
func (f *Floor) Advance(now time.Duration, eligible int) {
	eligible = min(eligible, len(f.talking))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.slots {
		s := &f.slots[i]
		for now >= s.until {
			if s.who >= 0 {
				f.talking[s.who].Store(false)
				s.lastWho, s.lastEnd = s.who, s.until
				s.who, s.since = -1, s.until
				s.until += f.between(f.p.PauseMin, f.p.PauseMax)
				continue
			}
			who := f.pick(eligible)
			if who < 0 {
				s.until = now + f.between(f.p.PauseMin, f.p.PauseMax)
				break
			}
			f.talking[who].Store(true)
			// A spurt starts now, not when the place fell free: a late Advance does not shorten it.
			s.who, s.since, s.until = who, now, now+f.between(f.p.SpurtMin, f.p.SpurtMax)
		}
	}
}

// pick returns a random participant below eligible who is not talking, or -1.
func (f *Floor) pick(eligible int) int {
	if eligible <= 0 {
		return -1
	}
	start := f.rng.IntN(eligible)
	for k := 0; k < eligible; k++ {
		i := (start + k) % eligible
		if !f.talking[i].Load() {
			return i
		}
	}
	return -1
}

// Talking reports whether participant i talks now.
func (f *Floor) Talking(i int) bool {
	return i >= 0 && i < len(f.talking) && f.talking[i].Load()
}

// Talkers is how many participants talk now.
func (f *Floor) Talkers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.slots {
		if s.who >= 0 {
			n++
		}
	}
	return n
}

// Expectation is what a participant's mix (everyone but itself) should carry at a moment.
type Expectation uint8

const (
	// Unsure: a spurt just started or ended.
	Unsure Expectation = iota
	// Speech: someone else has been talking for at least SpeechSettle.
	Speech
	// Silence: nobody else has talked for at least SilenceSettle.
	Silence
)

// Expect says what self's mix should carry at now.
func (f *Floor) Expect(self int, now time.Duration) Expectation {
	f.mu.Lock()
	defer f.mu.Unlock()
	quiet := true
	for _, s := range f.slots {
		if s.who >= 0 && s.who != self {
			if now-s.since >= SpeechSettle {
				return Speech
			}
			quiet = false
		}
		if s.lastWho >= 0 && s.lastWho != self && now-s.lastEnd < SilenceSettle {
			quiet = false
		}
	}
	if quiet {
		return Silence
	}
	return Unsure
}
