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

// rateMeter measures the bitrate of each spatial/temporal layer over the last second, in ten
// 100 ms buckets. Add is called per packet (from the receiver's read goroutines), Rates from the
// allocators; neither allocates.
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

// rates returns what forwarding each layer costs. With cumulative (SVC), spatial layer s includes
// the layers below it; temporal layer t always includes the temporal layers below.
func (m *rateMeter) rates(now time.Duration, cumulative bool) policy.Rates {
	var sum [policy.MaxSpatial][policy.MaxTemporal]uint64
	m.mu.Lock()
	m.advance(now)
	// The window is the ten buckets, or less while the meter is young.
	elapsed := min(meterBucket*(meterBuckets-1)+max(now-m.headAt, 0), now-m.startAt)
	if elapsed <= 0 {
		m.mu.Unlock()
		return policy.Rates{}
	}
	for b := range m.buckets {
		for s := range policy.MaxSpatial {
			for t := range policy.MaxTemporal {
				sum[s][t] += uint64(m.buckets[b][s][t])
			}
		}
	}
	m.mu.Unlock()
	var r policy.Rates
	for s := range policy.MaxSpatial {
		if sum[s] == [policy.MaxTemporal]uint64{} {
			continue // a layer with no packets of its own is not available
		}
		for t := range policy.MaxTemporal {
			var bytes uint64
			for ss := range s + 1 {
				if ss == s || cumulative {
					for tt := range t + 1 {
						bytes += sum[ss][tt]
					}
				}
			}
			r[s][t] = cc.BitrateOf(int(bytes), elapsed)
		}
	}
	return r
}
