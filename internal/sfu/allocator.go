package sfu

import (
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// Estimator is the source of a subscriber's bandwidth estimate (bwe.Estimator is one). If it also
// has State() cc.State, the allocator reads the over-use verdict and the RTT from it.
type Estimator interface {
	TargetRate() cc.Bitrate
}

type estimatorState interface {
	State() cc.State
}

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

// Decision is one change of a track's target, reported to the allocator's observer.
type Decision struct {
	At       time.Duration
	Track    *DownTrack
	From, To Layer
	Estimate cc.Bitrate
	Reason   string
}

// Allocator splits one subscriber's estimated bandwidth over its video down-tracks. All decisions
// run on its own goroutine, fed by an event queue, so the decision code needs no locks.
type Allocator struct {
	cfg    AllocatorConfig
	est    Estimator
	pol    policy.Policy
	log    *slog.Logger
	clock  func() time.Duration
	events chan allocEvent
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	observer func(Decision)

	// owned by the loop goroutine
	tracks  []*allocTrack
	decided []*allocTrack // the tracks of the current decision (measured ones)
	in      policy.Input
	out     policy.Output
	probe   cc.Bitrate
	padDue  float64
}

type allocTrack struct {
	d      *DownTrack
	opts   TrackOptions
	paused bool
	target Layer
	// net is the network controller's decision (policy.Track.NetLayers/NetKnown).
	netLayers int
	netKnown  bool
}

type allocEventKind uint8

const (
	evAdd allocEventKind = iota
	evRemove
	evOptions
	evPause
	evNudge
	evNet
)

type allocEvent struct {
	kind   allocEventKind
	d      *DownTrack
	opts   TrackOptions
	paused bool
	layers int
	known  bool
}

// AllocatorOption configures an Allocator.
type AllocatorOption func(*Allocator)

// WithClock replaces the allocator's clock (tests).
func WithClock(now func() time.Duration) AllocatorOption { return func(a *Allocator) { a.clock = now } }

// WithObserver receives every target change (on the allocator's goroutine: do not block).
func WithObserver(f func(Decision)) AllocatorOption { return func(a *Allocator) { a.observer = f } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) AllocatorOption { return func(a *Allocator) { a.log = l } }

// NewAllocator creates an allocator for one subscriber; est may be nil (no estimate: layers stay at
// their caps' base until one appears). Call Run (or Start) and Close.
func NewAllocator(cfg AllocatorConfig, est Estimator, opts ...AllocatorOption) (*Allocator, error) {
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
	a := &Allocator{
		cfg: cfg, est: est, pol: pol, clock: Now, events: make(chan allocEvent, 64), done: make(chan struct{}),
		log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

// Policy is the name of the policy in use.
func (a *Allocator) Policy() string { return a.pol.Name() }

// Start runs the allocator on its own goroutine.
func (a *Allocator) Start() {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.run()
	}()
}

// Close stops the allocator and waits for its goroutine.
func (a *Allocator) Close() {
	a.once.Do(func() { close(a.done) })
	a.wg.Wait()
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

// SetNetLayers feeds the network controller's decision for a track's subscription: how many rungs
// of its ladder the path carries (known false: no decision, the network policies fall back to bwe).
func (a *Allocator) SetNetLayers(d *DownTrack, layers int, known bool) {
	a.send(allocEvent{kind: evNet, d: d, layers: layers, known: known})
}

// Nudge makes the allocator decide now (e.g. the estimate changed).
func (a *Allocator) Nudge() {
	select {
	case a.events <- allocEvent{kind: evNudge}:
	default:
	}
}

func (a *Allocator) send(ev allocEvent) {
	select {
	case a.events <- ev:
	case <-a.done:
	}
}

func (a *Allocator) run() {
	tick := time.NewTicker(a.cfg.Tick)
	defer tick.Stop()
	pad := time.NewTicker(a.cfg.PaddingTick)
	defer pad.Stop()
	for {
		select {
		case <-a.done:
			return
		case ev := <-a.events:
			a.apply(ev)
			a.decide(a.clock())
		case <-tick.C:
			a.decide(a.clock())
		case <-pad.C:
			a.pad()
		}
	}
}

func (a *Allocator) apply(ev allocEvent) {
	i := a.find(ev.d)
	switch ev.kind {
	case evAdd:
		if i < 0 && ev.d.video {
			a.tracks = append(a.tracks, &allocTrack{d: ev.d, opts: ev.opts, target: policy.NoLayer})
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
		}
	case evNet:
		if i >= 0 {
			a.tracks[i].netLayers, a.tracks[i].netKnown = ev.layers, ev.known
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
	in.Now, in.Estimate, in.Received, in.Congested, in.RTT, in.Loss, in.CanProbe = now, 0, 0, false, 0, -1, false
	in.FeedbackLoss = 0
	if a.est == nil {
		a.follow()
		return
	}
	{
		in.Estimate = a.est.TargetRate()
		if s, ok := a.est.(estimatorState); ok {
			st := s.State()
			in.Congested = st.Usage == cc.Overuse
			in.Received = st.Received
			in.FeedbackLoss = st.LossRate
			in.RTT = time.Duration(st.RTTMs * float64(time.Millisecond))
		}
	}
	in.Tracks = in.Tracks[:0]
	a.decided = a.decided[:0]
	for _, t := range a.tracks {
		recv := t.d.Receiver()
		if !recv.Measured(now) {
			// Its layers are not measured yet: start at the base layer, and place it for real
			// (without holding back) once they are.
			if base := (Layer{Spatial: 0, Temporal: t.opts.Max.Temporal}); !t.paused && t.d.Target() != base {
				t.d.SetTarget(base)
			}
			t.target = policy.NoLayer
			continue
		}
		a.decided = append(a.decided, t)
		in.Tracks = append(in.Tracks, policy.Track{
			Screen: t.opts.Screen, Rates: recv.Rates(now), Max: t.opts.Max,
			Target: t.target, Current: t.d.Current(), Paused: t.paused,
			NetLayers: t.netLayers, NetKnown: t.netKnown,
		})
		if loss, ok := t.d.TakeLoss(); ok {
			in.Loss = maxFloat(in.Loss, loss)
		}
		in.CanProbe = in.CanProbe || t.d.HasRTX()
	}
	if len(a.decided) == 0 {
		a.probe = 0
		return
	}
	a.pol.Decide(in, &a.out)
	a.probe = a.out.Probe
	for i, t := range a.decided {
		to := a.out.Targets[i]
		if to == t.target {
			continue
		}
		if a.observer != nil {
			a.observer(Decision{At: now, Track: t.d, From: t.target, To: to, Estimate: in.Estimate, Reason: a.out.Reason})
		}
		a.log.Debug("layer target", "track", t.d.ID(), "from", t.target.String(), "to", to.String(),
			"estimate", in.Estimate.String(), "reason", a.out.Reason, "congested", in.Congested, "loss", in.Loss,
			"rates", in.Tracks[i].Rates)
		t.target = to
		t.d.SetTarget(to)
	}
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

// pad sends the probe padding due since the last padding tick, on the first track that can carry
// it.
func (a *Allocator) pad() {
	if a.probe <= 0 {
		a.padDue = 0
		return
	}
	a.padDue += float64(a.probe) * a.cfg.PaddingTick.Seconds() / 8
	for _, t := range a.tracks {
		if t.d.HasRTX() {
			sent := t.d.Pad(int(a.padDue))
			a.padDue -= float64(sent)
			break
		}
	}
	a.padDue = min(max(a.padDue, 0), float64(a.probe)*0.1/8) // never more than 100 ms in a burst
}

func maxFloat(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}
