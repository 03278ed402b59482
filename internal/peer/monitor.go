package peer

import (
	"sync"
	"time"
)

// MonitorConfig tunes the `media` and `slowlink` events and the bitrate windows.
type MonitorConfig struct {
	// Tick is how often the counters are sampled.
	Tick time.Duration
	// MediaTimeout: an m-line that received nothing for this long reports receiving=false (Janus's
	// no-media timer, 1 s).
	MediaTimeout time.Duration
	// Window is the length of the bitrate and slow-link windows.
	Window time.Duration
	// SlowLinkThreshold: a `slowlink` is reported when at least this many packets of one m-line were
	// NACKed within one window (uplink: strata NACKed media it receives; downlink: the peer NACKed
	// media strata sends). Zero disables slow-link events.
	SlowLinkThreshold uint64
	// SlowLinkInterval is the minimum time between two slow-link events of one m-line and direction.
	SlowLinkInterval time.Duration
}

// DefaultMonitorConfig: sample every 250 ms, media stops after 1 s without packets, slow link at 4 or
// more NACKed packets in 1 s (Janus's historical slowlink_threshold), at most one event per 5 s.
func DefaultMonitorConfig() MonitorConfig {
	return MonitorConfig{
		Tick:              250 * time.Millisecond,
		MediaTimeout:      time.Second,
		Window:            time.Second,
		SlowLinkThreshold: 4,
		SlowLinkInterval:  5 * time.Second,
	}
}

// monitorEvents receive what the monitor detects. Methods are called without the monitor's lock.
type monitorEvents interface {
	media(mid, kind string, receiving bool)
	slowLink(mid, kind string, uplink bool, lost int)
}

// mline is the monitor's state for one m-line (mid).
type mline struct {
	mid, kind string
	in, out   []*streamCounters

	seenPackets uint64
	lastGrowth  time.Duration
	receiving   bool

	windowStart                        time.Duration
	bytesIn0, bytesOut0                uint64
	nackIn0, nackOut0                  uint64
	bitrateIn, bitrateOut              uint64
	lastSlowUp, lastSlowDown           time.Duration
	sentSlowUp, sentSlowDown, windowed bool
}

// monitor turns the per-SSRC counters of one PeerConnection into per-m-line events and bitrates. Time
// comes in as an argument, so the logic runs the same in tests as on the wall clock.
type monitor struct {
	cfg   MonitorConfig
	mu    sync.Mutex
	lines map[string]*mline
}

func newMonitor(cfg MonitorConfig) *monitor {
	return &monitor{cfg: cfg, lines: map[string]*mline{}}
}

// setStreams (re)assigns the counters of an m-line; its history is kept.
func (m *monitor) setStreams(mid, kind string, in, out []*streamCounters) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.lines[mid]
	if !ok {
		l = &mline{mid: mid, kind: kind}
		m.lines[mid] = l
	}
	l.kind, l.in, l.out = kind, in, out
}

// bitrates returns the bits per second of an m-line over the last complete window.
func (m *monitor) bitrates(mid string) (in, out uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.lines[mid]; ok {
		return l.bitrateIn, l.bitrateOut
	}
	return 0, 0
}

type pendingEvent struct {
	mid, kind         string
	slow, up, receive bool
	lost              int
}

// tick samples the counters at time now and reports what changed.
func (m *monitor) tick(now time.Duration, ev monitorEvents) {
	var events []pendingEvent
	m.mu.Lock()
	for _, l := range m.lines {
		events = l.checkActivity(now, m.cfg, events)
		events = l.checkWindow(now, m.cfg, events)
	}
	m.mu.Unlock()
	for _, e := range events {
		if e.slow {
			ev.slowLink(e.mid, e.kind, e.up, e.lost)
		} else {
			ev.media(e.mid, e.kind, e.receive)
		}
	}
}

func (l *mline) checkActivity(now time.Duration, cfg MonitorConfig, events []pendingEvent) []pendingEvent {
	if len(l.in) == 0 {
		return events
	}
	packets := sum(l.in, func(c *streamCounters) uint64 { return c.packets.Load() })
	switch {
	case packets > l.seenPackets:
		l.seenPackets, l.lastGrowth = packets, now
		if !l.receiving {
			l.receiving = true
			events = append(events, pendingEvent{mid: l.mid, kind: l.kind, receive: true})
		}
	case l.receiving && now-l.lastGrowth >= cfg.MediaTimeout:
		l.receiving = false
		events = append(events, pendingEvent{mid: l.mid, kind: l.kind, receive: false})
	}
	return events
}

func (l *mline) checkWindow(now time.Duration, cfg MonitorConfig, events []pendingEvent) []pendingEvent {
	bytesIn := sum(l.in, func(c *streamCounters) uint64 { return c.bytes.Load() })
	bytesOut := sum(l.out, func(c *streamCounters) uint64 { return c.bytes.Load() })
	nackIn := sum(l.in, func(c *streamCounters) uint64 { return c.nacked.Load() })
	nackOut := sum(l.out, func(c *streamCounters) uint64 { return c.nacked.Load() })
	if !l.windowed {
		l.windowed, l.windowStart = true, now
		l.bytesIn0, l.bytesOut0, l.nackIn0, l.nackOut0 = bytesIn, bytesOut, nackIn, nackOut
		return events
	}
	elapsed := now - l.windowStart
	if elapsed < cfg.Window {
		return events
	}
	l.bitrateIn = perSecond(delta(bytesIn, l.bytesIn0)*8, elapsed)
	l.bitrateOut = perSecond(delta(bytesOut, l.bytesOut0)*8, elapsed)
	if cfg.SlowLinkThreshold > 0 {
		if lost := delta(nackIn, l.nackIn0); lost >= cfg.SlowLinkThreshold && l.slowDue(now, cfg, true) {
			l.sentSlowUp, l.lastSlowUp = true, now
			events = append(events, pendingEvent{mid: l.mid, kind: l.kind, slow: true, up: true, lost: int(lost)})
		}
		if lost := delta(nackOut, l.nackOut0); lost >= cfg.SlowLinkThreshold && l.slowDue(now, cfg, false) {
			l.sentSlowDown, l.lastSlowDown = true, now
			events = append(events, pendingEvent{mid: l.mid, kind: l.kind, slow: true, up: false, lost: int(lost)})
		}
	}
	l.windowStart = now
	l.bytesIn0, l.bytesOut0, l.nackIn0, l.nackOut0 = bytesIn, bytesOut, nackIn, nackOut
	return events
}

func (l *mline) slowDue(now time.Duration, cfg MonitorConfig, uplink bool) bool {
	if uplink {
		return !l.sentSlowUp || now-l.lastSlowUp >= cfg.SlowLinkInterval
	}
	return !l.sentSlowDown || now-l.lastSlowDown >= cfg.SlowLinkInterval
}

func sum(cs []*streamCounters, get func(*streamCounters) uint64) uint64 {
	var total uint64
	for _, c := range cs {
		total += get(c)
	}
	return total
}

// delta tolerates counters that were remapped to fewer streams (the sum can shrink).
func delta(now, before uint64) uint64 {
	if now < before {
		return 0
	}
	return now - before
}

func perSecond(v uint64, elapsed time.Duration) uint64 {
	if elapsed <= 0 {
		return 0
	}
	return uint64(float64(v) * float64(time.Second) / float64(elapsed))
}
