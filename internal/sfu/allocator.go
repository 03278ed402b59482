package sfu

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sched"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// AllocatorConfig tunes an allocator.
type AllocatorConfig struct {
	// Policy names the layer-selection policy ("bwe" or "probe").
	Policy string `yaml:"policy"`
	// Tick is how often the policy runs without an event.
	Tick time.Duration `yaml:"tick"`
	// PaddingTick is how often probe padding is paced out.
	PaddingTick time.Duration `yaml:"padding_tick"`
	// Policies holds every policy's tunables.
	Policies policy.Config `yaml:",inline"`
}

// DefaultAllocatorConfig returns the defaults.
func DefaultAllocatorConfig() AllocatorConfig {
	return AllocatorConfig{Policy: policy.NameBWE, Tick: 50 * time.Millisecond, PaddingTick: 10 * time.Millisecond, Policies: policy.DefaultConfig()}
}

// TrackOptions are the per-track inputs to allocation from the API.
type TrackOptions struct {
	// Screen marks a screen share (served first).
	Screen bool
	// Max caps the layer (Janus's substream/temporal or spatial_layer/temporal_layer); policy.TopLayer
	// when the subscriber asked for nothing.
	Max Layer
}

// DefaultTrackOptions is a camera with no cap.
func DefaultTrackOptions() TrackOptions { return TrackOptions{Max: policy.TopLayer} }

// SlowLinkInterval is the least time between two slow-link reports of one allocator.
const SlowLinkInterval = 5 * time.Second

// placeAfter: a new track is placed (given the best layer the estimate allows, at once) no sooner
// than this after it was added. A subscriber to a publisher that has been sending for a while has
// its track's layers measured at once, but a new PeerConnection's estimate is still GCC's 300 kbit/s
// start: placed then, it would climb from the base layer by held-back upgrades (a median 3 s to the
// top layer in the 64-subscriber fan-out benchmark). Meanwhile GCC's initial probe clusters go out
// on the track's base layer and take the estimate to what the path carries.
const placeAfter = 500 * time.Millisecond

// censusLoss: a path losing more than this is congested, as far as the census counts.
const censusLoss = 0.05

// Decision is one change of a track's target, reported to the allocator's observer.
type Decision struct {
	At       time.Duration
	Track    *DownTrack
	From, To Layer
	Estimate cc.Bitrate
	Reason   string
}

// Allocator splits one subscriber's estimated bandwidth over its video down-tracks. It has no
// goroutine of its own: its decision tick, its probe padding and the decisions that follow events
// run on a shared loop (package sched) with every other allocator's, so that N subscribers cost
// one wake-up per tick rather than N; the decision after a feedback message runs on the
// goroutine that read it (Nudge). The decision code runs under runMu, one call at a time, and
// needs no other lock; events from other goroutines wait in a queue.
type Allocator struct {
	cfg   AllocatorConfig
	est   Estimator // nil: no estimate, the caps are followed
	pol   policy.Policy
	log   *slog.Logger
	clock func() time.Duration

	// work applies queued events and decides; tick decides; pad sends probe padding.
	work, tick, pad *sched.Timer

	queueMu sync.Mutex
	queue   []allocEvent // events not applied yet
	spare   []allocEvent // the queue's other buffer
	started bool
	stopped bool

	// runMu is held by every decision (the loop's callbacks, Nudge) and by Close, so that nothing
	// is decided once Close has returned.
	runMu  sync.Mutex
	closed bool

	observer func(Decision)
	slowLink func(estimate cc.Bitrate)
	census   *Census
	censusID uint64

	// guarded by runMu
	tracks       []*allocTrack
	decided      []*allocTrack // the tracks of the current decision (measured ones)
	in           policy.Input
	out          policy.Output
	lastSlowLink time.Duration
	reportedSlow bool
	probes       probeRunner
	padding      bool
	steady       steadyState

	fullDecisions atomic.Uint64 // decisions that ran the policy (not stopped early as steady)
}

type allocTrack struct {
	d      *DownTrack
	opts   TrackOptions
	paused bool
	// starved: the policy paused the track for lack of bandwidth (policy.Track.Starved).
	starved bool
	target  Layer
	addedAt time.Duration
	// net is the network controller's decision (policy.Track.NetLayers/NetKnown/Enforced).
	netLayers   int
	netKnown    bool
	netEnforced bool
}

type allocEventKind uint8

const (
	evAdd allocEventKind = iota
	evRemove
	evOptions
	evPause
	evNet
)

type allocEvent struct {
	kind   allocEventKind
	d      *DownTrack
	opts   TrackOptions
	paused bool
	net    NetDecision
}

// AllocatorOption configures an Allocator.
type AllocatorOption func(*Allocator)

// WithClock replaces the allocator's clock (tests).
func WithClock(now func() time.Duration) AllocatorOption { return func(a *Allocator) { a.clock = now } }

// WithObserver receives every target change (on the shared loop's goroutine: do not block).
func WithObserver(f func(Decision)) AllocatorOption { return func(a *Allocator) { a.observer = f } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) AllocatorOption { return func(a *Allocator) { a.log = l } }

// WithSlowLink receives a report (on the shared loop's goroutine: do not block) when the allocator
// had to take a track below the layer the subscriber asked for because the path does not carry it
// (the estimate, congestion, a pause for lack of bandwidth) — the videoroom's slow_link event. At
// most one per SlowLinkInterval; estimate is the path's estimate then.
func WithSlowLink(f func(estimate cc.Bitrate)) AllocatorOption {
	return func(a *Allocator) { a.slowLink = f }
}

// WithCensus makes the allocator one of the server's subscribers counted by c, so that its policy
// can tell congestion of its own path from a cause shared by many (see Census).
func WithCensus(c *Census) AllocatorOption { return func(a *Allocator) { a.census = c } }

// NewAllocator creates an allocator for one subscriber. est is the subscriber's bandwidth
// estimator; nil means there is none, and every track then gets what its caps ask for, as in Janus.
// pr sends the estimator's probe clusters (NoProber, or nil, when it does not probe). Call Start,
// then Close.
func NewAllocator(cfg AllocatorConfig, est Estimator, pr Prober, opts ...AllocatorOption) (*Allocator, error) {
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultAllocatorConfig().Tick
	}
	if cfg.PaddingTick <= 0 {
		cfg.PaddingTick = DefaultAllocatorConfig().PaddingTick
	}
	pol, err := policy.New(cfg.Policy, cfg.Policies)
	if err != nil {
		return nil, err
	}
	a := &Allocator{cfg: cfg, est: est, pol: pol, clock: Now, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(a)
	}
	loop := sched.Shared()
	a.work, a.tick, a.pad = loop.NewTimer(a.onWork), loop.NewTimer(a.onTick), loop.NewTimer(a.onPad)
	if pr == nil {
		pr = NoProber{}
	}
	a.probes.init(pr, cfg.PaddingTick)
	if a.census != nil {
		a.censusID = a.census.join()
	}
	return a, nil
}

// Policy is the name of the policy in use.
func (a *Allocator) Policy() string { return a.pol.Name() }

// Start starts the allocator's timers. It decides on a tick, after events, and right after every
// feedback message the estimator processed (Nudge).
func (a *Allocator) Start() {
	if a.est != nil {
		a.est.OnUpdate(a.Nudge)
	}
	a.queueMu.Lock()
	if a.started || a.stopped {
		a.queueMu.Unlock()
		return
	}
	a.started = true
	pending := len(a.queue) > 0
	a.queueMu.Unlock()
	// Padding may be due from the start (the estimator's first probe clusters): the padding
	// timer runs until the first callback finds it is not. (Set before any timer runs.)
	a.padding = true
	a.pad.Start(a.cfg.PaddingTick)
	a.tick.Start(a.cfg.Tick)
	if pending {
		a.work.Once(0)
	}
}

// Close stops the allocator; no decision runs once it has returned.
func (a *Allocator) Close() {
	if a.est != nil {
		a.est.OnUpdate(nil)
	}
	a.queueMu.Lock()
	a.stopped = true
	a.queue = a.queue[:0]
	a.queueMu.Unlock()
	a.work.Stop()
	a.tick.Stop()
	a.pad.Stop()
	a.runMu.Lock()
	first := !a.closed
	if first {
		a.closed = true
		a.probes.stop()
	}
	a.runMu.Unlock()
	if first && a.census != nil {
		a.census.leave(a.censusID)
	}
}

// AddTrack puts a down-track under allocation. Audio tracks are forwarded as they are and ignored.
func (a *Allocator) AddTrack(d *DownTrack, opts TrackOptions) {
	a.send(allocEvent{kind: evAdd, d: d, opts: opts})
}

// RemoveTrack takes a down-track out of allocation.
func (a *Allocator) RemoveTrack(d *DownTrack) { a.send(allocEvent{kind: evRemove, d: d}) }

// SetOptions changes a track's caps or priority.
func (a *Allocator) SetOptions(d *DownTrack, opts TrackOptions) {
	a.send(allocEvent{kind: evOptions, d: d, opts: opts})
}

// SetPaused takes a paused track out of the budget (and back in).
func (a *Allocator) SetPaused(d *DownTrack, paused bool) {
	a.send(allocEvent{kind: evPause, d: d, paused: paused})
}

// NetDecision is the network controller's decision for a track's subscription.
type NetDecision struct {
	// Layers is how many rungs of the track's ladder the path carries; Known false: no decision,
	// the network policies fall back to bwe.
	Layers int
	Known  bool
	// Enforced: a switch on the path drops the rungs above Layers (api.Decision.Enforced). With
	// the network or hybrid policy the track then forwards every layer, marked
	// (DownTrack.SetEnforced), and follows the decision whatever the estimate says; with another
	// policy it is ignored (the SFU thins by its own estimate).
	Enforced bool
}

// SetNetLayers feeds the network controller's decision for a track's subscription: how many rungs
// of its ladder the path carries (known false: no decision, the network policies fall back to bwe).
func (a *Allocator) SetNetLayers(d *DownTrack, layers int, known bool) {
	a.SetNetDecision(d, NetDecision{Layers: layers, Known: known})
}

// SetNetDecision feeds the network controller's decision for a track's subscription.
func (a *Allocator) SetNetDecision(d *DownTrack, nd NetDecision) {
	a.send(allocEvent{kind: evNet, d: d, net: nd})
}

// Nudge makes the allocator decide now (e.g. the estimate changed). It runs the decision on the
// caller's goroutine (the estimator's feedback reader, which is awake anyway), under the lock
// every callback of the allocator holds: handing it to the shared loop would wake that loop
// (and reset its timer) for every feedback message of every subscriber.
func (a *Allocator) Nudge() {
	if a.isRunning() {
		a.onWork()
	}
}

func (a *Allocator) isRunning() bool {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	return a.started && !a.stopped
}

// send queues an event and has the loop apply it (and decide) at once.
func (a *Allocator) send(ev allocEvent) {
	a.queueMu.Lock()
	if a.stopped {
		a.queueMu.Unlock()
		return
	}
	a.queue = append(a.queue, ev)
	started := a.started
	a.queueMu.Unlock()
	if started {
		a.work.Once(0)
	}
}

// onWork applies the queued events and decides.
func (a *Allocator) onWork() {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if a.closed {
		return
	}
	a.queueMu.Lock()
	events := a.queue
	a.queue, a.spare = a.spare[:0], events
	a.queueMu.Unlock()
	for i := range events {
		a.apply(events[i])
		events[i] = allocEvent{}
	}
	if len(events) > 0 {
		a.steady.forget()
	}
	a.decide(a.clock())
	a.updatePadding()
}

func (a *Allocator) onTick() {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if a.closed {
		return
	}
	a.decide(a.clock())
	a.updatePadding()
}

func (a *Allocator) onPad() {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if a.closed {
		return
	}
	a.probes.pad(a.clock(), a.tracks)
	a.updatePadding()
}

// updatePadding starts a queued probe cluster when it can, and runs the padding timer only while
// padding is due: at every 10 ms it would otherwise run every subscriber's probe code 100 times a
// second for nothing. Queued GCC clusters are picked up after each decision meanwhile.
func (a *Allocator) updatePadding() {
	due := a.probes.wake(a.clock(), a.tracks)
	if due == a.padding {
		return
	}
	a.padding = due
	if due {
		a.pad.Start(a.cfg.PaddingTick)
	} else {
		a.pad.Stop()
	}
}

func (a *Allocator) apply(ev allocEvent) {
	i := a.find(ev.d)
	switch ev.kind {
	case evAdd:
		if i < 0 && ev.d.video {
			a.tracks = append(a.tracks, &allocTrack{d: ev.d, opts: ev.opts, target: policy.NoLayer, addedAt: a.clock()})
		}
	case evRemove:
		if i >= 0 {
			a.tracks = append(a.tracks[:i], a.tracks[i+1:]...)
		}
	case evOptions:
		if i >= 0 {
			a.tracks[i].opts = ev.opts
		}
	case evPause:
		if i >= 0 {
			a.tracks[i].paused = ev.paused
			a.tracks[i].starved = false
		}
	case evNet:
		if i >= 0 {
			a.tracks[i].netLayers, a.tracks[i].netKnown, a.tracks[i].netEnforced = ev.net.Layers, ev.net.Known, ev.net.Enforced
		}
	}
}

func (a *Allocator) find(d *DownTrack) int {
	for i, t := range a.tracks {
		if t.d == d {
			return i
		}
	}
	return -1
}

// decide runs the policy once and applies its targets.
func (a *Allocator) decide(now time.Duration) {
	in := &a.in
	in.Now, in.Loss, in.CanProbe = now, -1, false
	if a.est == nil {
		a.follow()
		return
	}
	in.Path = a.est.Path()
	if a.steady.holds(now, &in.Path, a.tracks) {
		return // nothing to change (allocator_steady.go)
	}
	a.steady.forget()
	a.fullDecisions.Add(1)
	in.Tracks = in.Tracks[:0]
	a.decided = a.decided[:0]
	for _, t := range a.tracks {
		recv := t.d.Receiver()
		if !recv.Measured(now) || (t.target == policy.NoLayer && !t.starved && now-t.addedAt < placeAfter) {
			// Its layers are not measured yet, or the estimator has just begun (its first probe
			// clusters go out on this track): start at the base layer, and place it for real
			// (without holding back) once they are and it has.
			if base := (Layer{Spatial: 0, Temporal: t.opts.Max.Temporal}); !t.paused && t.d.Target() != base {
				t.d.SetTarget(base)
			}
			t.target = policy.NoLayer
			t.d.SetEnforced(false, t.opts.Max)
			continue
		}
		a.decided = append(a.decided, t)
		enforced := a.enforced(t)
		in.Tracks = append(in.Tracks, policy.Track{
			Screen: t.opts.Screen, Rates: recv.Rates(now), Max: t.opts.Max,
			Target: t.target, Current: t.d.Current(), Paused: t.paused, Starved: t.starved,
			NetLayers: t.netLayers, NetKnown: t.netKnown, Enforced: enforced,
		})
		// A switch's drops show as loss in the reports of an enforced track: not the path's.
		if loss, ok := t.d.TakeLoss(); ok && !enforced {
			in.Loss = maxFloat(in.Loss, loss)
		}
		in.CanProbe = in.CanProbe || t.d.CanPad()
	}
	if len(a.decided) == 0 {
		a.probes.setPolicyProbe(now, 0, 0)
		return
	}
	if a.census != nil {
		congested := in.Congested || in.Overload || (in.FeedbackLoss > censusLoss && !anyEnforced(in.Tracks)) || in.Loss > censusLoss
		in.Shared = a.census.report(a.censusID, now, congested)
	}
	a.pol.Decide(in, &a.out)
	a.probes.setPolicyProbe(now, a.out.Probe, a.out.Usage)
	limited := false
	for i, t := range a.decided {
		to := a.out.Targets[i]
		t.starved = to.Spatial < 0 && !t.paused
		if to == t.target {
			continue
		}
		countDecision(t.target, to)
		if a.observer != nil {
			a.observer(Decision{At: now, Track: t.d, From: t.target, To: to, Estimate: in.Estimate, Reason: a.out.Reason})
		}
		a.log.Debug("layer target", "track", t.d.ID(), "from", t.target.String(), "to", to.String(),
			"estimate", in.Estimate.String(), "reason", a.out.Reason, "congested", in.Congested, "loss", in.Loss,
			"overload", in.Overload, "rates", in.Tracks[i].Rates)
		limited = limited || (a.out.Limited && to.Less(t.target) && to.Less(t.opts.Max))
		t.target = to
		t.d.SetTarget(to)
	}
	for i, t := range a.decided {
		t.d.SetEnforced(in.Tracks[i].Enforced, t.opts.Max)
	}
	a.steady.record(in, &a.out, len(a.tracks), a.probes.active)
	if limited {
		a.reportSlowLink(now, in.Estimate)
	}
}

// enforced says whether a switch thins t (SetNetDecision), for a policy that follows the
// controller.
func (a *Allocator) enforced(t *allocTrack) bool {
	return t.netKnown && t.netEnforced && !t.paused && policy.FollowsController(a.pol.Name())
}

// reportSlowLink tells the owner the path forced a track below what the subscriber asked for, at
// most once per SlowLinkInterval.
func (a *Allocator) reportSlowLink(now time.Duration, estimate cc.Bitrate) {
	if a.slowLink == nil || (a.reportedSlow && now-a.lastSlowLink < SlowLinkInterval) {
		return
	}
	a.lastSlowLink, a.reportedSlow = now, true
	a.slowLink(estimate)
}

// follow sets every track to its cap: without an estimate strata forwards what was asked for, as
// Janus does.
func (a *Allocator) follow() {
	for _, t := range a.tracks {
		to := t.opts.Max
		if t.paused {
			to = policy.NoLayer
		}
		if to != t.target {
			t.target = to
			t.d.SetTarget(to)
		}
	}
}

// anyEnforced: a switch thins some track, so the transport feedback's loss includes its drops.
func anyEnforced(tracks []policy.Track) bool {
	for i := range tracks {
		if tracks[i].Enforced {
			return true
		}
	}
	return false
}

func maxFloat(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}
