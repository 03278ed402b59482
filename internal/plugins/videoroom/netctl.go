package videoroom

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/client"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// netBridge connects the videoroom to a network controller (strata netctl, seed 000): it keeps the
// controller's streams and subscriptions in line with the rooms, and feeds the controller's
// decisions to the subscribers' allocators (policy.Track.NetLayers/NetKnown), which the network and
// hybrid policies follow.
//
// Registrations are reconciled with the rooms every interval rather than at each API event, so
// that the join/leave/unpublish paths stay free of controller calls (and of its latency or
// outages). While the controller is unreachable, or the decision stream is down, every decision is
// unknown: the network policies then behave as bwe and media keeps flowing.
type netBridge struct {
	p   *Plugin
	cfg config.VideoRoomNetCtl
	c   *client.Client
	log *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// fallbacks counts the outages (the controller became unreachable or the stream went down).
	fallbacks atomic.Int64
	// feedMu keeps decisions reaching the allocators in the order they were taken.
	feedMu sync.Mutex

	// switchMode: cfg.Enforcement is switch (marks, flows, Enforced decisions followed).
	switchMode bool
	layerDSCP  []uint8

	mu        sync.Mutex
	down      bool // an outage is in progress (warned once)
	watchUp   bool // the decision stream is connected: decisions are current
	decisions map[string]netDecision
	streams   map[string]*netStream // registered streams by id
	subs      map[string]*netSub    // the rooms' subscriptions by id, registered or not
	refused   map[string]bool       // ids the controller refused (warned once each)
}

// netDecision is what the bridge keeps of a decision.
type netDecision struct {
	layers   int
	enforced bool
}

// netStream is a stream registered with the controller and the layers last sent; after an outage
// it is kept (to be deleted should it be gone) but must be registered again. marks are the layer
// marks that go with the registered layers (switch mode; zero when the stream is not marked).
type netStream struct {
	layers     []api.Layer
	marks      sfu.LayerMarks
	sentAt     time.Time
	registered bool
}

// netSub is a registered subscription and where its decisions go.
type netSub struct {
	stream     string
	registered bool
	flow       *api.Flow // the flow registered with it (switch mode)
	alloc      *sfu.Allocator
	down       *sfu.DownTrack
	// applied is the decision last fed to the allocator, and the marks last set.
	applied      sfu.NetDecision
	appliedMarks sfu.LayerMarks
	fed          bool
}

// layerUpdateEvery is the shortest interval between two layer updates of one stream.
const layerUpdateEvery = time.Second

// newNetBridge starts the bridge, or returns nil when cfg has no URL (or a bad one, logged).
func newNetBridge(p *Plugin, cfg config.VideoRoomNetCtl, log *slog.Logger) *netBridge {
	if cfg.URL == "" {
		return nil
	}
	log = log.With("plugin", short, "netctl", cfg.URL)
	c, err := client.New(cfg.URL)
	if err != nil {
		log.Error("netctl disabled", "err", err)
		return nil
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &netBridge{p: p, cfg: cfg, c: c, log: log, ctx: ctx, cancel: cancel,
		decisions: map[string]netDecision{}, streams: map[string]*netStream{}, subs: map[string]*netSub{}, refused: map[string]bool{}}
	b.initMarks()
	watch := c.Watch(ctx, client.WatchConfig{MinBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second})
	b.wg.Add(2)
	go func() {
		defer b.wg.Done()
		b.follow(watch)
	}()
	go func() {
		defer b.wg.Done()
		b.syncLoop()
	}()
	return b
}

// close stops the bridge; registrations stay at the controller (it may outlive this SFU's rooms
// only until they are reconciled by the next start, or removed by hand).
func (b *netBridge) close() {
	if b == nil {
		return
	}
	b.cancel()
	b.wg.Wait()
}

// Fallbacks counts the controller outages since start (each fell back to bwe).
func (b *netBridge) Fallbacks() int64 {
	if b == nil {
		return 0
	}
	return b.fallbacks.Load()
}

// follow reads the decision stream until the watch ends.
func (b *netBridge) follow(w *client.Watch) {
	defer w.Close()
	for ev := range w.Events() {
		b.mu.Lock()
		switch ev.Type {
		case client.Connected:
			b.watchUp = true
			if b.down {
				b.down = false
				b.log.Info("netctl controller reachable again: following its decisions")
			}
		case client.Disconnected:
			b.watchUp = false
			b.wentDownLocked(ev.Err)
		case client.Snapshot:
			b.decisions = map[string]netDecision{}
			for _, d := range ev.Snapshot.Decisions {
				b.decisions[d.Subscription] = netDecision{d.Layers, d.Enforced}
			}
		case client.Decision:
			b.decisions[ev.Decision.Subscription] = netDecision{ev.Decision.Layers, ev.Decision.Enforced}
		case client.Removed:
			delete(b.decisions, ev.Removed)
		}
		b.mu.Unlock()
		b.feed()
	}
}

// wentDownLocked starts an outage: forget decisions and mark every registration lost (the
// controller may come back without them: sync registers everything again), and warn once.
func (b *netBridge) wentDownLocked(err error) {
	b.decisions = map[string]netDecision{}
	for _, s := range b.streams {
		s.registered = false
	}
	for _, s := range b.subs {
		s.registered = false
	}
	if b.down {
		return
	}
	b.down = true
	b.fallbacks.Add(1)
	b.log.Warn("netctl controller unreachable: network layer policies fall back to bwe until it is back", "err", err)
}

// feed gives every subscription's allocator its current decision, and its down-track the marks
// of its stream's registered layers (when they changed). A decision counts as enforced only in
// switch mode (and the allocator follows it only with the network and hybrid policies).
func (b *netBridge) feed() {
	type update struct {
		s     *netSub
		nd    sfu.NetDecision
		marks *sfu.LayerMarks
	}
	var ups []update
	b.feedMu.Lock()
	defer b.feedMu.Unlock()
	b.mu.Lock()
	for id, s := range b.subs {
		d, ok := b.decisions[id]
		nd := sfu.NetDecision{Known: ok && b.watchUp}
		if nd.Known {
			nd.Layers, nd.Enforced = d.layers, d.enforced && b.switchMode
		}
		u := update{s: s, nd: nd}
		if st := b.streams[s.stream]; st != nil && st.marks != s.appliedMarks {
			m := st.marks
			s.appliedMarks, u.marks = m, &m
		}
		if s.fed && s.applied == nd && u.marks == nil {
			continue
		}
		s.fed, s.applied = true, nd
		ups = append(ups, u)
	}
	b.mu.Unlock()
	for _, u := range ups {
		if u.marks != nil {
			u.s.down.SetMarks(*u.marks)
		}
		u.s.alloc.SetNetDecision(u.s.down, u.nd)
	}
}

// failed handles a controller call's error: an outage, or a refusal (warned once per id).
func (b *netBridge) failed(id string, err error) (outage bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if errors.Is(err, client.ErrUnreachable) {
		b.wentDownLocked(err)
		return true
	}
	if !b.refused[id] {
		b.refused[id] = true
		b.log.Warn("netctl controller refused a registration", "id", id, "err", err)
	}
	return false
}

// roomAllocator is the allocator configuration of a room's subscribers: the room's layer policy
// when it has one.
func (p *Plugin) roomAllocator(r *room) sfu.AllocatorConfig {
	cfg := p.alloc
	if pol := r.options().policy; pol != "" {
		cfg.Policy = pol
	}
	return cfg
}

// NetCtlFallbacks counts the network controller outages since start (each made the network and
// hybrid layer policies fall back to bwe until the controller was back); 0 without a controller.
func (p *Plugin) NetCtlFallbacks() int64 { return p.net.Fallbacks() }

// layerPolicy reads the strata extension "layer_policy" of create and edit.
func layerPolicy(b body) (string, bool, *requestError) {
	v, ok, err := b.str("layer_policy", false)
	if err != nil || !ok {
		return "", ok, err
	}
	if !slices.Contains(policy.Names(), v) {
		return "", false, errorf(ErrInvalidElement, "Invalid element (layer_policy should be one of %s)", strings.Join(policy.Names(), ", "))
	}
	return v, true, nil
}
