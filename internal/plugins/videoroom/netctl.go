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

	mu        sync.Mutex
	down      bool // an outage is in progress (warned once)
	watchUp   bool // the decision stream is connected: decisions are current
	decisions map[string]int
	streams   map[string]*netStream // registered streams by id
	subs      map[string]*netSub    // the rooms' subscriptions by id, registered or not
	refused   map[string]bool       // ids the controller refused (warned once each)
}

// netStream is a stream registered with the controller and the layers last sent; after an outage
// it is kept (to be deleted should it be gone) but must be registered again.
type netStream struct {
	layers     []api.Layer
	sentAt     time.Time
	registered bool
}

// netSub is a registered subscription and where its decisions go.
type netSub struct {
	stream     string
	registered bool
	alloc      *sfu.Allocator
	down       *sfu.DownTrack
	// applied is the decision last fed to the allocator.
	appliedLayers int
	appliedKnown  bool
	fed           bool
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
		decisions: map[string]int{}, streams: map[string]*netStream{}, subs: map[string]*netSub{}, refused: map[string]bool{}}
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
			b.decisions = map[string]int{}
			for _, d := range ev.Snapshot.Decisions {
				b.decisions[d.Subscription] = d.Layers
			}
		case client.Decision:
			b.decisions[ev.Decision.Subscription] = ev.Decision.Layers
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
	b.decisions = map[string]int{}
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

// feed gives every subscription's allocator its current decision (when it changed).
func (b *netBridge) feed() {
	type update struct {
		s      *netSub
		layers int
		known  bool
	}
	var ups []update
	b.feedMu.Lock()
	defer b.feedMu.Unlock()
	b.mu.Lock()
	for id, s := range b.subs {
		layers, ok := b.decisions[id]
		known := ok && b.watchUp
		if s.fed && s.appliedKnown == known && (!known || s.appliedLayers == layers) {
			continue
		}
		s.fed, s.appliedKnown, s.appliedLayers = true, known, layers
		ups = append(ups, update{s, layers, known})
	}
	b.mu.Unlock()
	for _, u := range ups {
		u.s.alloc.SetNetLayers(u.s.down, u.layers, u.known)
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
