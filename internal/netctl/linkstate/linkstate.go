// Package linkstate holds the network controller's live view of link loads. Loads come from
// pluggable Sources: interface counters reported by agents (Counters), an in-process feed the
// simulator pushes to (InProcess), or anything else implementing Source (the emulator, later).
// Resolve picks, per link, the newest sample that is not stale; when there is none the controller
// falls back to the topology's static capacity with no load.
//
// A load is what the link carries in total, the controller's own streams included, as interface
// counters measure it; the controller subtracts what it attributes to its streams to find the
// background traffic.
//
// Times are durations on the controller's clock (any epoch), passed in by the caller.
package linkstate

import (
	"fmt"
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// Sample is one measurement of a link's load.
type Sample struct {
	Load cc.Bitrate
	At   time.Duration
	// Source names where it came from, e.g. "agent madrid/eth0 rx" or "sim".
	Source string
}

// Source provides link loads, by link index in the controller's topology. Implementations must be
// safe for concurrent use.
type Source interface {
	Name() string
	// Latest returns the newest sample the source has for the link.
	Latest(link int) (Sample, bool)
}

// Resolve returns the newest sample among the sources that is at most staleAfter old at now; ok
// is false when there is none (the caller then uses the static capacity, with no load).
func Resolve(sources []Source, link int, now, staleAfter time.Duration) (best Sample, ok bool) {
	for _, src := range sources {
		s, have := src.Latest(link)
		if !have || now-s.At > staleAfter {
			continue
		}
		if !ok || s.At > best.At {
			best, ok = s, true
		}
	}
	return best, ok
}

// Feed is a Source that keeps the last sample pushed for each link.
type Feed struct {
	name    string
	mu      sync.RWMutex
	samples []Sample
	have    []bool
}

// NewFeed returns an empty feed for a topology with n links.
func NewFeed(name string, n int) *Feed {
	return &Feed{name: name, samples: make([]Sample, n), have: make([]bool, n)}
}

// Name implements Source.
func (f *Feed) Name() string { return f.name }

// Latest implements Source.
func (f *Feed) Latest(link int) (Sample, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if link < 0 || link >= len(f.samples) || !f.have[link] {
		return Sample{}, false
	}
	return f.samples[link], true
}

// Set records a sample; an older sample than the one held is ignored (reports can cross).
func (f *Feed) Set(link int, s Sample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if link < 0 || link >= len(f.samples) || (f.have[link] && s.At < f.samples[link].At) {
		return
	}
	f.samples[link], f.have[link] = s, true
}

// InProcess is the source the simulator drives through a Go call.
type InProcess struct {
	*Feed
	topo *topo.Topology
}

// NewInProcess returns an in-process source for a topology.
func NewInProcess(t *topo.Topology) *InProcess {
	return &InProcess{Feed: NewFeed("in-process", len(t.Links())), topo: t}
}

// SetLinkLoad records that the named link carries bps (in total) at time at.
func (p *InProcess) SetLinkLoad(link string, bps cc.Bitrate, at time.Duration) error {
	i, ok := p.topo.LinkIndex(link)
	if !ok {
		return fmt.Errorf("unknown link %q", link)
	}
	if bps < 0 {
		return fmt.Errorf("negative load %d bit/s on link %q", bps, link)
	}
	p.Set(i, Sample{Load: bps, At: at, Source: p.name})
	return nil
}

// Counters is the source fed by agents' interface counter reports. A link's load is the tx rate
// of its Interface on its From node or the rx rate of its PeerInterface on its To node, whichever
// was reported last.
type Counters struct {
	*Feed
	topo *topo.Topology
}

// NewCounters returns a counters source for a topology.
func NewCounters(t *topo.Topology) *Counters {
	return &Counters{Feed: NewFeed("agent", len(t.Links())), topo: t}
}

// Report records one interface's rates as measured by the agent on node; it returns the names of
// the links the counters measure (none when the topology maps no link to this interface).
func (c *Counters) Report(node, iface string, tx, rx cc.Bitrate, at time.Duration) []string {
	var mapped []string
	for _, m := range []struct {
		dir  string
		rate cc.Bitrate
	}{{"tx", tx}, {"rx", rx}} {
		li, ok := c.topo.CounterLink(node, iface, m.dir)
		if !ok || m.rate < 0 {
			continue
		}
		c.Set(li, Sample{Load: m.rate, At: at, Source: fmt.Sprintf("agent %s/%s %s", node, iface, m.dir)})
		mapped = append(mapped, c.topo.Links()[li].Name)
	}
	return mapped
}
