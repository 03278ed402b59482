package sim

import (
	"fmt"
	"math"
	"time"
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

// queued is one packet's slot in a link's FIFO.
type queued struct {
	start, depart time.Duration
	size          int
}

// Link is a one-way link: a drop-tail FIFO served at a scheduled capacity,
// then propagation delay and jitter. Random loss applies on entry.
type Link struct {
	cfg     LinkConfig
	sim     *Sim
	cur     cursor
	loss    *lossModel
	jitter  func() float64
	ring    []queued // FIFO of packets not yet fully transmitted
	head, n int
	bytes   int // bytes in ring
	lastDep time.Duration
	lastArr time.Duration
	direct  bool // fed only by one other link
	// out holds packets on their way to the next hop, in arrival order
	// (links never reorder). Only the first has an event in the scheduler,
	// which keeps the scheduler's heap as small as the number of links.
	out           []inFlight
	outHead, outN int
	Stats         LinkStats
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
	l := &Link{cfg: cfg, sim: s, cur: newCursor(cfg.Rate), ring: make([]queued, 64), out: make([]inFlight, 64)}
	if cfg.Loss.Model != "" && cfg.Loss.Model != "none" {
		l.loss = newLossModel(cfg.Loss, NewRNG(s.cfg.Seed, "link/"+cfg.Name+"/loss"))
	}
	if cfg.Jitter > 0 {
		rng := NewRNG(s.cfg.Seed, "link/"+cfg.Name+"/jitter")
		l.jitter = rng.Float64
	}
	nb := s.bins()
	l.Stats = LinkStats{Name: cfg.Name, From: cfg.From, To: cfg.To, Rate: cfg.Rate, Delay: cfg.Delay,
		Bytes: make([]int64, nb), QDelaySum: make([]time.Duration, nb), QDelayN: make([]int32, nb),
		DropsPerBin: make([]int32, nb), MaxBacklog: make([]int32, nb)}
	return l
}

// Config returns the link's configuration.
func (l *Link) Config() LinkConfig { return l.cfg }

// Name is the link's name.
func (l *Link) Name() string { return l.cfg.Name }

// prune forgets packets whose transmission has ended by now.
func (l *Link) prune(now time.Duration) {
	for l.n > 0 {
		q := &l.ring[l.head]
		if q.depart > now {
			return
		}
		l.bytes -= q.size
		l.head = (l.head + 1) & (len(l.ring) - 1)
		l.n--
	}
}

// waiting returns the packets and bytes queued behind the one in service.
func (l *Link) waiting(now time.Duration) (int, int) {
	if l.n == 0 {
		return 0, 0
	}
	q := &l.ring[l.head]
	if q.start <= now {
		return l.n - 1, l.bytes - q.size
	}
	return l.n, l.bytes
}

func (l *Link) push(q queued) {
	if l.n == len(l.ring) {
		grown := make([]queued, 2*len(l.ring))
		for i := 0; i < l.n; i++ {
			grown[i] = l.ring[(l.head+i)&(len(l.ring)-1)]
		}
		l.ring, l.head = grown, 0
	}
	l.ring[(l.head+l.n)&(len(l.ring)-1)] = q
	l.n++
	l.bytes += q.size
}

// Backlog returns the packets and bytes waiting at time now.
func (l *Link) Backlog(now time.Duration) (int, int) {
	l.prune(now)
	return l.waiting(now)
}

// enqueue accepts a packet arriving at the link's input at time now. now
// is the simulation clock except for a link fed by a single other link (see
// Sim.markDirect), which its feeder hands packets to ahead of time.
func (l *Link) enqueue(p *Packet, now time.Duration) {
	s := l.sim
	bin := s.bin(now)
	if l.loss != nil && l.loss.lose() {
		l.Stats.Losses++
		l.Stats.DropsPerBin[bin]++
		s.drop(p, now)
		return
	}
	l.prune(now)
	pkts, bytes := l.waiting(now)
	rate := l.cur.rate(now)
	size := p.Size + l.cfg.Overhead
	if l.cfg.Queue.exceeded(pkts+1, bytes+size, rate) {
		l.Stats.Drops++
		l.Stats.DropsPerBin[bin]++
		s.drop(p, now)
		return
	}
	if p.ECT && l.cfg.ECN.Unit != LimitNone && l.cfg.ECN.exceeded(pkts, bytes, rate) {
		p.CE = true
		l.Stats.Marks++
	}
	if int32(bytes) > l.Stats.MaxBacklog[bin] {
		l.Stats.MaxBacklog[bin] = int32(bytes)
	}
	start := max(now, l.lastDep)
	depart := l.cur.finish(start, float64(size)*8)
	l.lastDep = depart
	l.push(queued{start: start, depart: depart, size: size})
	wait := start - now
	p.Queued += wait
	l.Stats.QDelaySum[bin] += wait
	l.Stats.QDelayN[bin]++
	if depart == Never {
		// The link is down for the rest of the run: the packet never leaves.
		s.drop(p, now)
		return
	}
	if depart <= s.cfg.Duration {
		l.Stats.TxPackets++
		l.Stats.TxBytes += int64(size)
		l.Stats.Bytes[s.bin(depart)] += int64(size)
	}
	arrive := depart + l.cfg.Delay
	if l.jitter != nil {
		arrive += time.Duration(l.jitter() * float64(l.cfg.Jitter))
	}
	arrive = max(arrive, l.lastArr)
	l.lastArr = arrive
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
	if l.outN == len(l.out) {
		grown := make([]inFlight, 2*len(l.out))
		for i := 0; i < l.outN; i++ {
			grown[i] = l.out[(l.outHead+i)&(len(l.out)-1)]
		}
		l.out, l.outHead = grown, 0
	}
	l.out[(l.outHead+l.outN)&(len(l.out)-1)] = inFlight{at: at, p: p}
	l.outN++
	if l.outN == 1 {
		l.sim.sched.Schedule(at, l, 0, 0, nil)
	}
}

// HandleEvent delivers the packet that has crossed the link to its next
// hop and arms the event for the one behind it.
func (l *Link) HandleEvent(ev Event) {
	slot := &l.out[l.outHead]
	p := slot.p
	slot.p = nil
	l.outHead = (l.outHead + 1) & (len(l.out) - 1)
	l.outN--
	if l.outN > 0 {
		l.sim.sched.Schedule(l.out[l.outHead].at, l, 0, 0, nil)
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
