package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-rtc/strata/internal/ring"
)

// LimitUnit is the unit a queue limit or marking threshold is given in.
type LimitUnit uint8

// Limit units.
const (
	LimitNone    LimitUnit = iota // no limit / no marking
	LimitPackets                  // packets waiting
	LimitBytes                    // bytes waiting
	LimitTime                     // waiting bytes drained at the current link rate
)

// Limit is a queue size or an ECN marking threshold.
type Limit struct {
	Unit  LimitUnit
	Value float64 // packets, bytes, or seconds
}

func (l Limit) String() string {
	switch l.Unit {
	case LimitPackets:
		return fmt.Sprintf("%gpkt", l.Value)
	case LimitBytes:
		return fmt.Sprintf("%gB", l.Value)
	case LimitTime:
		return fmt.Sprint(time.Duration(l.Value * 1e9))
	}
	return "unlimited"
}

// exceeded reports whether a queue holding pkts packets and bytes bytes
// (after adding the arriving packet) is over the limit at link rate bps.
func (l Limit) exceeded(pkts int, bytes int, bps float64) bool {
	switch l.Unit {
	case LimitPackets:
		return float64(pkts) > l.Value
	case LimitBytes:
		return float64(bytes) > l.Value
	case LimitTime:
		return float64(bytes)*8 > bps*l.Value
	}
	return false
}

// LinkConfig describes a one-way link.
type LinkConfig struct {
	Name     string
	From, To string
	Rate     RateSchedule
	Delay    time.Duration // propagation delay
	Jitter   time.Duration // extra delay, uniform in [0, Jitter); order is kept
	Queue    Limit         // drop-tail limit on the waiting packets
	ECN      Limit         // mark CE on ECT packets when the waiting queue exceeds this
	Loss     LossConfig
	Overhead int // per-packet link-layer bytes counted in serialisation
}

// Gate decides, before a link's queue, whether a packet enters it (a switch's policer). Arrival
// times never decrease.
type Gate interface {
	Pass(p *Packet, now time.Duration) bool
}

// SetGate puts g in front of the link's queue (nil removes it).
func (l *Link) SetGate(g Gate) { l.gate = g }

// queued is one packet's slot in a link's FIFO.
type queued struct {
	start, depart time.Duration
	size          int
}

// Link is a one-way link in the simulation: a LinkCore (drop-tail FIFO
// served at a scheduled capacity, then propagation delay and jitter, random
// loss on entry) whose packets the scheduler carries to the next hop.
type Link struct {
	*LinkCore
	sim    *Sim
	direct bool // fed only by one other link
	gate   Gate // a switch policing what enters the link, or nil
	// out holds packets on their way to the next hop, in arrival order
	// (links never reorder). Only the first has an event in the scheduler,
	// which keeps the scheduler's heap as small as the number of links.
	out ring.Ring[inFlight]
}

type inFlight struct {
	at time.Duration
	p  *Packet
}

// LinkStats are a link's counters and per-interval series.
type LinkStats struct {
	Name, From, To string
	Rate           RateSchedule
	Delay          time.Duration
	TxPackets      int64 // packets whose transmission ended before the run did
	TxBytes        int64
	Drops          int64           // drop-tail overflows
	Losses         int64           // random (loss-model) losses
	Marks          int64           // CE marks
	Bytes          []int64         // per interval: bytes whose transmission ended in it
	QDelaySum      []time.Duration // per interval: sum of waits of packets enqueued in it
	QDelayN        []int32
	DropsPerBin    []int32
	MaxBacklog     []int32 // per interval: largest waiting backlog seen at an arrival (bytes)
}

func newLink(s *Sim, cfg LinkConfig) *Link {
	return &Link{LinkCore: NewLinkCore(cfg, s.cfg.Seed, s.cfg.Duration, s.cfg.Interval), sim: s,
		out: ring.New[inFlight](64)}
}

// enqueue accepts a packet arriving at the link's input at time now. now
// is the simulation clock except for a link fed by a single other link (see
// Sim.markDirect), which its feeder hands packets to ahead of time.
func (l *Link) enqueue(p *Packet, now time.Duration) {
	if l.gate != nil && !l.gate.Pass(p, now) {
		l.sim.drop(p, now) // dropped before the link: its counters never see it
		return
	}
	a := l.Admit(now, p.Size, p.ECT)
	p.Queued += a.Wait
	if a.Marked {
		p.CE = true
	}
	if a.Verdict != Admitted {
		// Lost, dropped, or down for the rest of the run: it never leaves.
		l.sim.drop(p, now)
		return
	}
	arrive := a.Arrive
	if next := p.hop + 1; next < len(p.route.Links) && p.route.Links[next].direct {
		// Nothing but this link feeds the next one, so no other packet can
		// reach it in between: hand the packet over now, saving an event.
		p.hop = next
		p.route.Links[next].enqueue(p, arrive)
		return
	}
	l.pushOut(arrive, p)
}

func (l *Link) pushOut(at time.Duration, p *Packet) {
	l.out.Push(inFlight{at: at, p: p})
	if l.out.Len() == 1 {
		l.sim.sched.Schedule(at, l, 0, 0, nil)
	}
}

// HandleEvent delivers the packet that has crossed the link to its next
// hop and arms the event for the one behind it.
func (l *Link) HandleEvent(ev Event) {
	p := l.out.Pop().p
	if l.out.Len() > 0 {
		l.sim.sched.Schedule(l.out.Front().at, l, 0, 0, nil)
	}
	l.sim.forward(p)
}

// Utilization is the fraction of the link's capacity over [0, end) that was
// used; it is NaN when the capacity was zero throughout.
func (ls *LinkStats) Utilization(end time.Duration) float64 {
	capBits := ls.Rate.Bits(0, end)
	if capBits == 0 {
		return math.NaN()
	}
	return float64(ls.TxBytes) * 8 / capBits
}
