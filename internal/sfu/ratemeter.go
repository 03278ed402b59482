package sfu

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

const (
	meterBuckets = 10
	meterBucket  = 100 * time.Millisecond
)

// rateMeter measures the bitrate of each spatial/temporal layer of one receiver layer over the
// last second, in ten 100 ms buckets. Each receiver layer has its own, so that the read goroutines
// of a simulcast track never share a lock; add is called per packet from that layer's goroutine,
// addRates from the allocators. Neither allocates.
type rateMeter struct {
	mu      sync.Mutex
	buckets [meterBuckets][policy.MaxSpatial][policy.MaxTemporal]uint32
	head    int
	headAt  time.Duration // start of the head bucket
	startAt time.Duration
	started bool
}

// advance rotates buckets so that the head covers now. Called with mu held.
func (m *rateMeter) advance(now time.Duration) {
	if !m.started {
		m.started, m.headAt, m.startAt = true, now, now
		return
	}
	for n := 0; now-m.headAt >= meterBucket && n <= meterBuckets; n++ {
		m.head = (m.head + 1) % meterBuckets
		m.buckets[m.head] = [policy.MaxSpatial][policy.MaxTemporal]uint32{}
		m.headAt += meterBucket
	}
	if now-m.headAt >= meterBucket { // a long silence: start afresh
		m.headAt = now
	}
}

// add counts bytes of a packet of spatial layer s and temporal layer t (t < 0 counts as 0).
func (m *rateMeter) add(now time.Duration, s, t int, bytes int) {
	if s < 0 || s >= policy.MaxSpatial {
		return
	}
	t = max(0, min(t, policy.MaxTemporal-1))
	m.mu.Lock()
	m.advance(now)
	m.buckets[m.head][s][t] += uint32(bytes)
	m.mu.Unlock()
}

// addRates adds the rate of each spatial/temporal layer this meter saw (each on its own, not
// including the layers below) to r, and marks in has the spatial layers that had packets.
func (m *rateMeter) addRates(now time.Duration, r *policy.Rates, has *[policy.MaxSpatial]bool) {
	var sum [policy.MaxSpatial][policy.MaxTemporal]uint64
	m.mu.Lock()
	if !m.started {
		m.mu.Unlock()
		return
	}
	m.advance(now)
	// The window is the ten buckets, or less while the meter is young.
	elapsed := min(meterBucket*(meterBuckets-1)+max(now-m.headAt, 0), now-m.startAt)
	for b := range m.buckets {
		for s := range policy.MaxSpatial {
			for t := range policy.MaxTemporal {
				sum[s][t] += uint64(m.buckets[b][s][t])
			}
		}
	}
	m.mu.Unlock()
	if elapsed <= 0 {
		return
	}
	for s := range policy.MaxSpatial {
		for t := range policy.MaxTemporal {
			if sum[s][t] > 0 {
				has[s] = true
				r[s][t] += cc.BitrateOf(int(sum[s][t]), elapsed)
			}
		}
	}
}

// cumulativeRates turns per-layer rates into what forwarding each layer costs: temporal layer t
// includes the temporal layers below it, and with cumulative (SVC) spatial layer s includes the
// spatial layers below it. A spatial layer with no packets of its own is not available (0).
func cumulativeRates(raw *policy.Rates, has *[policy.MaxSpatial]bool, cumulative bool) policy.Rates {
	var r policy.Rates
	for s := range policy.MaxSpatial {
		if !has[s] {
			continue
		}
		for t := range policy.MaxTemporal {
			var rate cc.Bitrate
			for ss := range s + 1 {
				if ss == s || cumulative {
					for tt := range t + 1 {
						rate += raw[ss][tt]
					}
				}
			}
			r[s][t] = rate
		}
	}
	return r
}
