package sim

import (
	"time"

	"github.com/strata-rtc/strata/internal/ring"
)

// LinkCore is a one-way link's admission and timing: random loss on entry, the
// drop-tail queue (the waiting queue excludes the packet in transmission), ECN
// marking, serialisation at the scheduled capacity (outages included),
// propagation delay and order-preserving jitter, with the link's counters. The
// simulator's Link and the emulator's (internal/emu/netem) both run it, so the
// two engines admit, mark and time packets alike. Not safe for concurrent use.
type LinkCore struct {
	cfg     LinkConfig
	cur     cursor
	loss    *lossModel
	jitter  func() float64
	queue   ring.Ring[queued] // packets not yet fully transmitted
	bytes   int               // bytes in the queue
	lastDep time.Duration
	lastArr time.Duration
	end     time.Duration // transmissions ending later are not counted as sent
	// arrivals and departures find their statistics bin; each moves
	// forward in time, so a cursor saves a division per packet.
	arrivals, departures binCursor
	Stats                LinkStats
}

// Verdict is what a link does with an arriving packet.
type Verdict uint8

// Verdicts.
const (
	Admitted Verdict = iota // queued; it leaves at Admission.Arrive
	Lost                    // random (loss-model) loss on entry
	Dropped                 // drop-tail overflow
	Stranded                // queued behind an outage that lasts to the end: it never leaves
)

// Admission is the fate of one packet offered to a link.
type Admission struct {
	Verdict Verdict
	Marked  bool          // CE set (the packet was ECT and the queue above the ECN limit)
	Wait    time.Duration // time waiting before its transmission starts
	Depart  time.Duration // end of its transmission
	Arrive  time.Duration // when it reaches the far end (Depart + delay + jitter, never before the one ahead)
}

// NewLinkStats returns a link's zeroed counters with bins per-interval slots.
func NewLinkStats(cfg LinkConfig, bins int) LinkStats {
	return LinkStats{Name: cfg.Name, From: cfg.From, To: cfg.To, Rate: cfg.Rate, Delay: cfg.Delay,
		Bytes: make([]int64, bins), QDelaySum: make([]time.Duration, bins), QDelayN: make([]int32, bins),
		DropsPerBin: make([]int32, bins), MaxBacklog: make([]int32, bins)}
}

// NewLinkCore returns a link for a run of the given duration, its statistics
// binned by interval. Loss and jitter draw from generators named after the
// link, seeded from seed, as in the simulator.
func NewLinkCore(cfg LinkConfig, seed uint64, duration, interval time.Duration) *LinkCore {
	nb := int(duration/interval) + 1
	bins := binCursor{interval: interval, last: nb - 1, hi: -1}
	c := &LinkCore{cfg: cfg, cur: newCursor(cfg.Rate), queue: ring.New[queued](64), end: duration,
		arrivals: bins, departures: bins}
	if cfg.Loss.Model != "" && cfg.Loss.Model != "none" {
		c.loss = newLossModel(cfg.Loss, NewRNG(seed, "link/"+cfg.Name+"/loss"))
	}
	if cfg.Jitter > 0 {
		c.jitter = NewRNG(seed, "link/"+cfg.Name+"/jitter").Float64
	}
	c.Stats = NewLinkStats(cfg, nb)
	return c
}

// Config returns the link's configuration.
func (c *LinkCore) Config() LinkConfig { return c.cfg }

// Name is the link's name.
func (c *LinkCore) Name() string { return c.cfg.Name }

// Rate is the link's capacity at time t (t never earlier than the last call's).
func (c *LinkCore) Rate(t time.Duration) float64 { return c.cur.rate(t) }

// prune forgets packets whose transmission has ended by now.
func (c *LinkCore) prune(now time.Duration) {
	for c.queue.Len() > 0 {
		q := c.queue.Front()
		if q.depart > now {
			return
		}
		c.bytes -= q.size
		c.queue.Pop()
	}
}

// waiting returns the packets and bytes queued behind the one in service.
func (c *LinkCore) waiting(now time.Duration) (int, int) {
	n := c.queue.Len()
	if n == 0 {
		return 0, 0
	}
	q := c.queue.Front()
	if q.start <= now {
		return n - 1, c.bytes - q.size
	}
	return n, c.bytes
}

func (c *LinkCore) push(q queued) {
	c.queue.Push(q)
	c.bytes += q.size
}

// Backlog returns the packets and bytes waiting at time now.
func (c *LinkCore) Backlog(now time.Duration) (int, int) {
	c.prune(now)
	return c.waiting(now)
}

// Admit offers the link a packet of size network-layer bytes (the link adds
// its Overhead) arriving at time now; ect says whether it may be CE-marked.
// Arrival times must not decrease.
func (c *LinkCore) Admit(now time.Duration, size int, ect bool) Admission {
	bin := c.arrivals.at(now)
	if c.loss != nil && c.loss.lose() {
		c.Stats.Losses++
		c.Stats.DropsPerBin[bin]++
		return Admission{Verdict: Lost}
	}
	c.prune(now)
	pkts, bytes := c.waiting(now)
	rate := c.cur.rate(now)
	size += c.cfg.Overhead
	if c.cfg.Queue.exceeded(pkts+1, bytes+size, rate) {
		c.Stats.Drops++
		c.Stats.DropsPerBin[bin]++
		return Admission{Verdict: Dropped}
	}
	var a Admission
	if ect && c.cfg.ECN.Unit != LimitNone && c.cfg.ECN.exceeded(pkts, bytes, rate) {
		a.Marked = true
		c.Stats.Marks++
	}
	if int32(bytes) > c.Stats.MaxBacklog[bin] {
		c.Stats.MaxBacklog[bin] = int32(bytes)
	}
	start := max(now, c.lastDep)
	a.Depart = c.cur.finish(start, float64(size)*8)
	c.lastDep = a.Depart
	c.push(queued{start: start, depart: a.Depart, size: size})
	a.Wait = start - now
	c.Stats.QDelaySum[bin] += a.Wait
	c.Stats.QDelayN[bin]++
	if a.Depart == Never {
		a.Verdict = Stranded
		return a
	}
	if a.Depart <= c.end {
		c.Stats.TxPackets++
		c.Stats.TxBytes += int64(size)
		c.Stats.Bytes[c.departures.at(a.Depart)] += int64(size)
	}
	a.Arrive = a.Depart + c.cfg.Delay
	if c.jitter != nil {
		a.Arrive += time.Duration(c.jitter() * float64(c.cfg.Jitter))
	}
	a.Arrive = max(a.Arrive, c.lastArr)
	c.lastArr = a.Arrive
	return a
}

// binCursor maps a time to its statistics bin, min(t/interval, last),
// remembering the last bin's bounds: for times that mostly move forward
// within a bin the answer costs two comparisons instead of a division.
type binCursor struct {
	interval time.Duration
	last     int
	i        int
	lo, hi   time.Duration // bin i covers [lo, hi); hi < lo before the first use
}

func (b *binCursor) at(t time.Duration) int {
	if t >= b.lo && t < b.hi {
		return b.i
	}
	b.i = min(int(t/b.interval), b.last)
	b.lo = time.Duration(b.i) * b.interval
	b.hi = b.lo + b.interval
	if b.i == b.last {
		b.hi = Never
	}
	if t < b.lo { // before zero: not cached
		b.hi = b.lo - 1
	}
	return b.i
}
