package netctl

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/alloc"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/linkstate"
	"github.com/strata-rtc/strata/internal/netctl/topo"
)

// Config tunes the controller.
type Config struct {
	Alloc alloc.Config `yaml:"alloc"`
	// StaleAfter: a link's load sample older than this is ignored, and the link falls back to its
	// static capacity with no load.
	StaleAfter time.Duration `yaml:"stale_after"`
	// Settle: for this long after a subscription's decision changes, the controller attributes the
	// higher of its old and new rate to it when working out background traffic from measured
	// loads, because counters measured over the last interval still hold the old traffic (and the
	// SFU switches layers only at keyframes). Keep it below Alloc.Hold, so that this optimism can
	// never cause an upgrade on its own.
	Settle time.Duration `yaml:"settle"`
	// Reserve is the media reservation (0: none): on links leaving an enforcement node, managed
	// streams may use up to Reserve × capacity whatever the background traffic, and the switch
	// there meters the non-media traffic entering the link to what the media allocation leaves
	// (api.Meter). MeterBurst is the meters' bucket in bits.
	Reserve    float64 `yaml:"reserve"`
	MeterBurst int64   `yaml:"meter_burst"`
	// MeterRise: a link's meter opens from the reservation's floor ((1 − Reserve) × capacity) to
	// its rate in four steps over this long after the link's first subscription (0: at once), so
	// that a queue the background has filled drains before media starts on it.
	MeterRise time.Duration `yaml:"meter_rise"`
	// PeakHold: with a reservation, the controller allocates and meters the layers of streams
	// crossing a reserved link at the highest rate the SFU reported for each over this window (0:
	// at their current rates), so that media stays within its reservation through busy scenes.
	PeakHold time.Duration `yaml:"peak_hold"`
}

// DefaultConfig returns the defaults: alloc.DefaultConfig, samples stale after 5 s, 1.5 s settle,
// no reservation (when there is one: 500 kbit meter bursts, meters opening over 4 s, a 10 s peak
// hold).
func DefaultConfig() Config {
	return Config{Alloc: alloc.DefaultConfig(), StaleAfter: 5 * time.Second, Settle: 1500 * time.Millisecond,
		MeterBurst: DefaultMeterBurst, MeterRise: 4 * time.Second, PeakHold: 10 * time.Second}
}

// DefaultMeterBurst is the meters' default bucket: 500 kbit, enough for TCP to get its share
// through a policer (a smaller bucket starves it).
const DefaultMeterBurst = 500_000

// Validate reports nonsensical settings.
func (c Config) Validate() error {
	if err := c.Alloc.Validate(); err != nil {
		return err
	}
	if c.StaleAfter <= 0 || c.Settle < 0 || c.PeakHold < 0 || c.MeterRise < 0 {
		return fmt.Errorf("netctl: stale_after must be positive, settle, meter_rise and peak_hold not negative")
	}
	if !(c.Reserve >= 0 && c.Reserve < 1) {
		return fmt.Errorf("netctl: reserve must be at least 0 and below 1 (got %g)", c.Reserve)
	}
	if c.Reserve > 0 && c.MeterBurst < 12_000 {
		return fmt.Errorf("netctl: meter_burst must hold a packet: at least 12000 bits (got %d)", c.MeterBurst)
	}
	return nil
}

// Controller is the network controller's state: topology, link state, the SFU's streams and
// subscriptions, and the decisions and drop rules derived from them. All methods are safe for
// concurrent use. Like the allocator, it reads no clock: every method that depends on time takes
// now, a duration on the caller's clock (the server's uptime, or simulated time).
//
// Changes (streams, subscriptions, link state) take effect at the next Update; the HTTP server
// calls Update after every change and on a tick, the simulator from its event loop.
type Controller struct {
	cfg      Config
	topo     *topo.Topology
	inproc   *linkstate.InProcess
	counters *linkstate.Counters
	rules    *RuleTable

	// applyMu orders Updates, so that rule sets reach enforcers in the order they were computed;
	// mu guards everything else.
	applyMu   sync.Mutex
	mu        sync.Mutex
	sources   []linkstate.Source
	enforcers []Enforcer
	override  []cc.Bitrate // capacity overrides, 0 for none
	streams   map[string]*stream
	subs      map[string]*subscription
	order     []*subscription // subscriptions sorted by id: the allocator's tie-break order
	alloc     *alloc.Allocator
	links     []linkView
	seq       uint64
	published map[string]api.Decision
	removed   []string // subscriptions deleted since the last Update
	watchers  map[*Watcher]struct{}
	nodeRules map[string][]api.Rule
	// reservable marks the links a reservation applies to (those leaving an enforcement node);
	// nodeMeters is every node's meter set as last applied; meterSince is when each link's meter
	// appeared (-1: it has none), for MeterRise.
	reservable []bool
	nodeMeters map[string][]api.Meter
	meterSince []time.Duration
	// installed holds, per node, the rules its switch reported installed (SetEnforced), by
	// subscription; nil while the switch is unreachable or refusing.
	installed map[string]map[string]api.Rule

	// scratch for Update
	demands []alloc.Demand
	states  []alloc.State
	allocIn []alloc.Link
}

type stream struct {
	api.Stream
	rates []cc.Bitrate
	// peak holds the rates over the last Config.PeakHold, peakRates their maxima (demandRates).
	peak      peakHold
	peakRates []cc.Bitrate
	subs      map[string]*subscription
}

type subscription struct {
	api.Subscription
	receiver string
	path     topo.Path
	stream   *stream
	state    alloc.State
	// prevRate is the rate of the decision before the last change, at changedAt (see Settle).
	prevRate  cc.Bitrate
	changedAt time.Duration
	// rule is the subscription's current drop rule (hasRule false when no node on its path can
	// enforce), as of the last Update.
	rule    api.Rule
	hasRule bool
}

// Option configures a Controller.
type Option func(*Controller)

// WithSource adds a link-load source (beside the agent counters and the in-process feed).
func WithSource(s linkstate.Source) Option {
	return func(c *Controller) { c.sources = append(c.sources, s) }
}

// WithEnforcer adds an enforcement point that receives every node's rules when they change.
func WithEnforcer(e Enforcer) Option {
	return func(c *Controller) { c.enforcers = append(c.enforcers, e) }
}

// New returns a controller for a topology. The configuration must pass Validate.
func New(t *topo.Topology, cfg Config, opts ...Option) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Controller{
		cfg: cfg, topo: t,
		inproc: linkstate.NewInProcess(t), counters: linkstate.NewCounters(t), rules: NewRuleTable(),
		override: make([]cc.Bitrate, len(t.Links())),
		streams:  map[string]*stream{}, subs: map[string]*subscription{},
		alloc: alloc.New(cfg.Alloc), links: make([]linkView, len(t.Links())),
		published: map[string]api.Decision{}, watchers: map[*Watcher]struct{}{},
		nodeRules: map[string][]api.Rule{}, nodeMeters: map[string][]api.Meter{},
		reservable: make([]bool, len(t.Links())), installed: map[string]map[string]api.Rule{},
		meterSince: make([]time.Duration, len(t.Links())),
	}
	for i := range c.meterSince {
		c.meterSince[i] = -1
	}
	for i, l := range t.Links() {
		c.reservable[i] = cfg.Reserve > 0 && t.CanEnforce(l.From)
	}
	c.sources = []linkstate.Source{c.counters, c.inproc}
	for _, o := range opts {
		o(c)
	}
	c.updateLinks(0)
	return c, nil
}

// Topology returns the controller's topology.
func (c *Controller) Topology() *topo.Topology { return c.topo }

// Config returns the controller's configuration.
func (c *Controller) Config() Config { return c.cfg }

// Rules returns the controller's rule table (what GET /v1/rules serves).
func (c *Controller) Rules() *RuleTable { return c.rules }

// SetLinkLoad is the in-process link-state source: the named link carries bps in total at time
// at. The simulator calls it as it measures its links.
func (c *Controller) SetLinkLoad(link string, bps cc.Bitrate, at time.Duration) error {
	if err := c.inproc.SetLinkLoad(link, bps, at); err != nil {
		return errorf(http.StatusBadRequest, api.CodeUnknownLink, "%v", err)
	}
	return nil
}

// SetLinkCapacity overrides a link's capacity (bps > 0), or restores the topology's (bps == 0).
func (c *Controller) SetLinkCapacity(link string, bps cc.Bitrate) error {
	i, ok := c.topo.LinkIndex(link)
	if !ok {
		return errorf(http.StatusNotFound, api.CodeUnknownLink, "unknown link %q", link)
	}
	if bps < 0 {
		return errorf(http.StatusBadRequest, api.CodeBadRate, "negative capacity %d bit/s", bps)
	}
	c.mu.Lock()
	c.override[i] = bps
	c.mu.Unlock()
	return nil
}

// Report records an agent's interface rates for node at time at.
func (c *Controller) Report(r api.Report, at time.Duration) (api.ReportResult, error) {
	if !c.topo.HasNode(r.Node) {
		return api.ReportResult{}, errorf(http.StatusBadRequest, api.CodeUnknownNode, "unknown node %q", r.Node)
	}
	res := api.ReportResult{Mapped: []string{}}
	for i, ifc := range r.Interfaces {
		if ifc.TxBps < 0 || ifc.RxBps < 0 {
			return api.ReportResult{}, errorf(http.StatusBadRequest, api.CodeBadRate, "interfaces[%d]: negative rate", i)
		}
	}
	for _, ifc := range r.Interfaces {
		m := c.counters.Report(r.Node, ifc.Name, cc.Bitrate(ifc.TxBps), cc.Bitrate(ifc.RxBps), at)
		if len(m) == 0 {
			res.Unmapped = append(res.Unmapped, ifc.Name)
		}
		res.Mapped = append(res.Mapped, m...)
	}
	return res, nil
}

// PutStream registers a stream or replaces its source and layers.
func (c *Controller) PutStream(s api.Stream) error {
	if err := checkID("stream", s.ID); err != nil {
		return err
	}
	rates, err := checkLayers(s.Layers)
	if err != nil {
		return err
	}
	if !c.topo.HasNode(s.Source) {
		return errorf(http.StatusBadRequest, api.CodeUnknownNode, "source: unknown node %q", s.Source)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.streams[s.ID]
	if !ok {
		c.streams[s.ID] = &stream{Stream: cloneStream(s), rates: rates, subs: map[string]*subscription{}}
		return nil
	}
	if st.Source != s.Source {
		// Every subscription's path starts at the source: recompute them all, or change nothing.
		paths := make(map[string]topo.Path, len(st.subs))
		for id, sub := range st.subs {
			req := sub.Subscription
			if req.Computed {
				req.Path = nil
			}
			p, recv, err := c.route(s.Source, req)
			if err != nil || recv != sub.receiver {
				return errorf(http.StatusConflict, api.CodeConflict, "source %q: subscription %q has no path from there", s.Source, id)
			}
			paths[id] = p
		}
		for id, p := range paths {
			st.subs[id].path, st.subs[id].Path = p, c.topo.Names(p)
		}
	}
	st.Stream, st.rates = cloneStream(s), rates
	return nil
}

// SetLayers replaces a stream's layers (as measured rates change).
func (c *Controller) SetLayers(id string, layers []api.Layer) error {
	rates, err := checkLayers(layers)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.streams[id]
	if !ok {
		return errorf(http.StatusNotFound, api.CodeUnknownStream, "unknown stream %q", id)
	}
	st.Layers, st.rates = slices.Clone(layers), rates
	return nil
}

// DeleteStream removes a stream and its subscriptions.
func (c *Controller) DeleteStream(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.streams[id]
	if !ok {
		return errorf(http.StatusNotFound, api.CodeUnknownStream, "unknown stream %q", id)
	}
	for sid := range st.subs {
		c.removeSub(sid)
	}
	delete(c.streams, id)
	return nil
}

// Stream returns a registered stream.
func (c *Controller) Stream(id string) (api.Stream, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.streams[id]
	if !ok {
		return api.Stream{}, false
	}
	return cloneStream(st.Stream), true
}

// Streams lists the registered streams by id.
func (c *Controller) Streams() []api.Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]api.Stream, 0, len(c.streams))
	for _, st := range c.streams {
		out = append(out, cloneStream(st.Stream))
	}
	slices.SortFunc(out, func(a, b api.Stream) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// PutSubscription registers a subscription or changes its stream, receiver or path.
func (c *Controller) PutSubscription(s api.Subscription) error {
	if err := checkID("subscription", s.ID); err != nil {
		return err
	}
	if s.Receiver == "" && len(s.Path) == 0 {
		return errorf(http.StatusBadRequest, api.CodeBadRequest, "a subscription needs a receiver or a path")
	}
	if err := checkFlow(s.Flow); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.streams[s.Stream]
	if !ok {
		return errorf(http.StatusBadRequest, api.CodeUnknownStream, "stream: unknown stream %q", s.Stream)
	}
	path, recv, err := c.route(st.Source, s)
	if err != nil {
		return err
	}
	sub, exists := c.subs[s.ID]
	if !exists {
		sub = &subscription{}
	} else if sub.stream != st {
		delete(sub.stream.subs, s.ID)
		sub.state = alloc.State{} // a different stream: a new decision
	}
	sub.Subscription = api.Subscription{ID: s.ID, Stream: s.Stream, Receiver: recv, Path: c.topo.Names(path), Computed: len(s.Path) == 0, Flow: cloneFlow(s.Flow)}
	sub.receiver, sub.path, sub.stream = recv, path, st
	if !exists {
		c.subs[s.ID] = sub
		c.order = append(c.order, sub)
		slices.SortFunc(c.order, func(a, b *subscription) int { return strings.Compare(a.ID, b.ID) })
	}
	st.subs[s.ID] = sub
	return nil
}

// route resolves a subscription's path from a source node.
func (c *Controller) route(source string, s api.Subscription) (topo.Path, string, error) {
	if s.Receiver != "" && !c.topo.HasNode(s.Receiver) {
		return nil, "", errorf(http.StatusBadRequest, api.CodeUnknownNode, "receiver: unknown node %q", s.Receiver)
	}
	if len(s.Path) > 0 {
		p, end, err := c.topo.ResolvePath(source, s.Receiver, s.Path)
		if err != nil {
			return nil, "", errorf(http.StatusBadRequest, api.CodeBadPath, "path: %v", err)
		}
		return p, end, nil
	}
	p, err := c.topo.ShortestPath(source, s.Receiver)
	if err != nil {
		return nil, "", errorf(http.StatusBadRequest, api.CodeNoPath, "%v", err)
	}
	return p, s.Receiver, nil
}

// DeleteSubscription removes a subscription.
func (c *Controller) DeleteSubscription(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[id]; !ok {
		return errorf(http.StatusNotFound, api.CodeUnknownSubscription, "unknown subscription %q", id)
	}
	c.removeSub(id)
	return nil
}

func (c *Controller) removeSub(id string) {
	sub := c.subs[id]
	delete(sub.stream.subs, id)
	delete(c.subs, id)
	c.order = slices.DeleteFunc(c.order, func(s *subscription) bool { return s == sub })
	c.removed = append(c.removed, id)
}

// Subscriptions lists the subscriptions by id, with their resolved paths.
func (c *Controller) Subscriptions() []api.Subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]api.Subscription, len(c.order))
	for i, s := range c.order {
		out[i] = s.Subscription
		out[i].Path, out[i].Flow = slices.Clone(s.Path), cloneFlow(s.Flow)
	}
	return out
}

// Subscription returns one subscription.
func (c *Controller) Subscription(id string) (api.Subscription, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.subs[id]
	if !ok {
		return api.Subscription{}, false
	}
	out := s.Subscription
	out.Path, out.Flow = slices.Clone(s.Path), cloneFlow(s.Flow)
	return out, true
}

func checkLayers(layers []api.Layer) ([]cc.Bitrate, error) {
	if len(layers) == 0 || len(layers) > api.MaxLayers {
		return nil, errorf(http.StatusBadRequest, api.CodeBadRequest, "layers: want 1 to %d layers, got %d", api.MaxLayers, len(layers))
	}
	rates := make([]cc.Bitrate, len(layers))
	for i, l := range layers {
		if l.RateBps < 0 || l.RateBps > int64(cc.MaxBitrate) {
			return nil, errorf(http.StatusBadRequest, api.CodeBadRate, "layers[%d].rate_bps: %d is not a rate in bit/s between 0 and %d", i, l.RateBps, int64(cc.MaxBitrate))
		}
		rates[i] = cc.Bitrate(l.RateBps)
	}
	if err := checkMarks(layers); err != nil {
		return nil, err
	}
	return rates, nil
}

func checkID(kind, id string) error {
	if id == "" || len(id) > api.MaxIDLen {
		return errorf(http.StatusBadRequest, api.CodeBadID, "%s id must be 1 to %d characters", kind, api.MaxIDLen)
	}
	if err := topo.CheckName(id); err != nil {
		return errorf(http.StatusBadRequest, api.CodeBadID, "%s id: %v", kind, err)
	}
	return nil
}

func cloneStream(s api.Stream) api.Stream {
	s.Layers = slices.Clone(s.Layers)
	return s
}
