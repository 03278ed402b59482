package client

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// Stream is one received stream of a subscription: which feed and kind it is, and its
// statistics, guarded by its own lock (its reader goroutine and the sampler both use it).
type Stream struct {
	Mid  string
	Feed uint64
	Kind string

	mu    sync.Mutex
	stats *rtpstats.Stream
	bad   uint64
	light lightState // a light receiver's counting at the socket (tap.go); unused otherwise
}

func (s *Stream) observe(pkt []byte, at time.Duration) {
	s.mu.Lock()
	if s.stats.Observe(pkt, at) != nil {
		s.bad++
	}
	s.mu.Unlock()
}

// Summarize returns the stream's statistics as of now.
func (s *Stream) Summarize(now time.Duration) rtpstats.Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.Summarize(now)
}

// Counters returns the stream's running totals.
func (s *Stream) Counters() rtpstats.Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.Counters()
}

// Timing returns an audio stream's timing totals (late frames, inter-arrival and lateness
// histograms).
func (s *Stream) Timing() rtpstats.TimingCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.Timing()
}
