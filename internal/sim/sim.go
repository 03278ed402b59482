package sim

import (
	"fmt"
	"time"
)

// Config holds run-wide settings.
type Config struct {
	Seed     uint64
	Duration time.Duration
	// Interval is the width of the time-series bins (default 100 ms).
	Interval time.Duration
}

// Flow is a traffic source with its receiver.
type Flow interface {
	Stats() *FlowStats
	// begin schedules the flow's first events.
	begin()
	// routes lists the routes the flow's packets take.
	routes() []*Route
}

// Sim is one simulation run. It is single-threaded; run independent Sims on
// separate goroutines for parallelism.
type Sim struct {
	cfg    Config
	sched  Scheduler
	pool   packetPool
	links  []*Link
	byName map[string]*Link
	flows  []Flow
	nbins  int
	ran    bool
}

// New returns an empty simulation.
func New(cfg Config) *Sim {
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	return &Sim{cfg: cfg, byName: map[string]*Link{}, nbins: int(cfg.Duration/cfg.Interval) + 1}
}

// Config returns the run's configuration.
func (s *Sim) Config() Config { return s.cfg }

// Now is the current simulated time.
func (s *Sim) Now() time.Duration { return s.sched.now }

// Events is the number of events handled so far.
func (s *Sim) Events() uint64 { return s.sched.Processed }

// PacketsAllocated is how many packets the pool had to allocate.
func (s *Sim) PacketsAllocated() int { return s.pool.allocated }

func (s *Sim) bins() int { return s.nbins }

func (s *Sim) bin(t time.Duration) int {
	b := int(t / s.cfg.Interval)
	if b >= s.nbins {
		return s.nbins - 1
	}
	return b
}

// AddLink adds a one-way link.
func (s *Sim) AddLink(cfg LinkConfig) (*Link, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("link needs a name")
	}
	if _, dup := s.byName[cfg.Name]; dup {
		return nil, fmt.Errorf("duplicate link %q", cfg.Name)
	}
	if err := cfg.Rate.Validate(); err != nil {
		return nil, fmt.Errorf("link %s: %w", cfg.Name, err)
	}
	if err := cfg.Loss.Validate(); err != nil {
		return nil, fmt.Errorf("link %s: %w", cfg.Name, err)
	}
	if cfg.Delay < 0 || cfg.Jitter < 0 {
		return nil, fmt.Errorf("link %s: negative delay", cfg.Name)
	}
	l := newLink(s, cfg)
	s.links = append(s.links, l)
	s.byName[cfg.Name] = l
	return l, nil
}

// Link returns the link with the given name, or nil.
func (s *Sim) Link(name string) *Link { return s.byName[name] }

// Links returns all links in the order they were added.
func (s *Sim) Links() []*Link { return s.links }

// Path resolves a node sequence into the links joining consecutive nodes.
func (s *Sim) Path(nodes []string) ([]*Link, error) {
	if len(nodes) < 2 {
		return nil, fmt.Errorf("a path needs at least two nodes")
	}
	out := make([]*Link, 0, len(nodes)-1)
	for i := 0; i+1 < len(nodes); i++ {
		l := s.linkBetween(nodes[i], nodes[i+1])
		if l == nil {
			return nil, fmt.Errorf("no link from %s to %s", nodes[i], nodes[i+1])
		}
		out = append(out, l)
	}
	return out, nil
}

func (s *Sim) linkBetween(from, to string) *Link {
	for _, l := range s.links {
		if l.cfg.From == from && l.cfg.To == to {
			return l
		}
	}
	return nil
}

// AddFlow registers a flow; it starts when the run does.
func (s *Sim) AddFlow(f Flow) { s.flows = append(s.flows, f) }

// Flows returns the flows in the order they were added.
func (s *Sim) Flows() []Flow { return s.flows }

// Run runs the simulation to its configured duration. A Sim runs once.
func (s *Sim) Run() error {
	if s.ran {
		return fmt.Errorf("simulation already ran")
	}
	s.ran = true
	s.markDirect()
	for _, f := range s.flows {
		f.begin()
	}
	s.sched.RunUntil(s.cfg.Duration)
	return nil
}

// Schedule queues an event for h.
func (s *Sim) Schedule(at time.Duration, h Handler, kind int32, arg int64, p *Packet) {
	s.sched.Schedule(at, h, kind, arg, p)
}

// NewPacket takes a packet from the pool.
func (s *Sim) NewPacket() *Packet { return s.pool.get() }

// Free returns a packet to the pool.
func (s *Sim) Free(p *Packet) { s.pool.put(p) }

// Send injects a packet at the first link of r.
func (s *Sim) Send(p *Packet, r *Route) {
	p.route = r
	p.hop = 0
	if len(r.Links) == 0 {
		r.Dst.Receive(p)
		return
	}
	r.Links[0].enqueue(p, s.sched.now)
}

func (s *Sim) forward(p *Packet) {
	p.hop++
	if p.hop < len(p.route.Links) {
		p.route.Links[p.hop].enqueue(p, s.sched.now)
		return
	}
	p.route.Dst.Receive(p)
}

func (s *Sim) drop(p *Packet, now time.Duration) {
	if p.Stats != nil {
		p.Stats.onDrop(now, p)
	}
	s.pool.put(p)
}

// markDirect finds the links that only one other link feeds, over every
// route of every flow. Packets reach such a link in the order its feeder
// sends them, so the feeder can enqueue them there at once, with their
// future arrival time, instead of scheduling an arrival event: the link's
// state then only ever advances in time order, exactly as with events.
func (s *Sim) markDirect() {
	feeders := map[*Link]map[*Link]bool{}
	add := func(l, from *Link) {
		if feeders[l] == nil {
			feeders[l] = map[*Link]bool{}
		}
		feeders[l][from] = true
	}
	for _, f := range s.flows {
		for _, r := range f.routes() {
			for i, l := range r.Links {
				if i == 0 {
					add(l, nil) // fed by an endpoint
				} else {
					add(l, r.Links[i-1])
				}
			}
		}
	}
	for l, from := range feeders {
		l.direct = len(from) == 1 && !from[nil]
	}
}
