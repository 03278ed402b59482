// Package policy holds strata's layer-selection policies: pure decision code that, given the state
// of one subscriber (its bandwidth estimate, congestion and loss signals, and for each of its video
// tracks the bitrate of every layer, the caps asked through the API and the layers being sent),
// picks the layer each track should be forwarded at, and how much padding to send to probe the path.
//
// Policies read no clock and do no I/O: time is Input.Now. The same code runs in the SFU (the
// allocator in package sfu calls Decide from its event loop), in the simulator and in trace-replay
// tests. The network-assisted policies (network, hybrid) read the network controller's decision
// from Track.NetLayers and implement the same Policy interface.
package policy

import (
	"fmt"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// MaxSpatial and MaxTemporal are the layer counts Janus's API knows (substream/spatial_layer and
// temporal/temporal_layer 0–2).
const (
	MaxSpatial  = 3
	MaxTemporal = 3
)

// Layer is a spatial layer (simulcast substream or SVC spatial layer) and the highest temporal
// layer forwarded with it.
type Layer struct {
	Spatial, Temporal int8
}

// NoLayer means nothing is forwarded (a paused track).
var NoLayer = Layer{-1, -1}

// TopLayer is the highest layer the API can name.
var TopLayer = Layer{MaxSpatial - 1, MaxTemporal - 1}

// Less orders layers by spatial then temporal id.
func (l Layer) Less(o Layer) bool {
	return l.Spatial < o.Spatial || (l.Spatial == o.Spatial && l.Temporal < o.Temporal)
}

// String formats a layer as "s1t2" ("none" for NoLayer).
func (l Layer) String() string {
	if l.Spatial < 0 {
		return "none"
	}
	return fmt.Sprintf("s%dt%d", l.Spatial, l.Temporal)
}

// Rates is what a subscriber receives at each target layer: Rates[s][t] is the bitrate of forwarding
// spatial layer s with temporal layers up to t (for SVC, lower spatial layers included). Zero means
// the layer is not available (the publisher is not sending it, or it has not been measured yet).
type Rates [MaxSpatial][MaxTemporal]cc.Bitrate

// of is the rate of a layer (0 for NoLayer or a layer out of range).
func (r *Rates) of(l Layer) cc.Bitrate {
	if l.Spatial < 0 || l.Temporal < 0 || int(l.Spatial) >= MaxSpatial || int(l.Temporal) >= MaxTemporal {
		return 0
	}
	return r[l.Spatial][l.Temporal]
}

// Track is one video track of the subscriber as a policy sees it.
type Track struct {
	// Screen marks screen shares, which are served before cameras.
	Screen bool
	// Rates are the measured layer bitrates.
	Rates Rates
	// Max is the highest layer the subscriber asked for through the API (TopLayer when it did not).
	Max Layer
	// Target is the policy's previous decision for this track (NoLayer for a new track), Current
	// the layer actually being forwarded (it lags Target until the new layer's keyframe arrives).
	Target, Current Layer
	// Paused tracks get no layer.
	Paused bool
	// Starved says the policy itself paused the track at its previous decision because the path did
	// not carry even its base layer (Target is NoLayer): it is not a new track to place, but one to
	// resume when the path allows.
	Starved bool
	// NetLayers is the network controller's decision for this track's subscription (seed 000): how
	// many rungs of the track's ladder (its available layers within Max, cheapest first, base
	// first) the path to the subscriber can carry. It is read only when NetKnown is set; the
	// network and hybrid policies use it, the others ignore it.
	NetLayers int
	NetKnown  bool
	// Enforced says a switch on the path enforces that decision (the SFU forwards every layer and
	// the switch drops what the path cannot carry). The switch's drops then show up as loss in
	// the subscriber's feedback, so the network and hybrid policies follow the decision alone for
	// this track and neither the estimate nor probing pulls it elsewhere.
	Enforced bool
}

// Input is one decision's view of the subscriber.
type Input struct {
	Now time.Duration
	// Path is the subscriber's bandwidth estimator's view of the path, read once per decision.
	Path
	// Loss is the fraction of packets lost on the path according to receiver reports that arrived
	// since the previous decision, or -1 when none arrived.
	Loss float64
	// CanProbe says padding can be sent to this subscriber (RTX was negotiated on a video track).
	CanProbe bool
	// Shared says many of the server's subscribers are congested at once: the cause is shared (the
	// server stalled, or its own link is full), not this subscriber's path, so video is not paused
	// for it. See sfu.Census.
	Shared bool
	Tracks []Track
}

// Path is everything a bandwidth estimator says about the path to one subscriber: the estimate
// and the signals behind it. The allocator takes one snapshot of it per decision (from
// sfu.Estimator), the simulator builds it from its own estimators.
type Path struct {
	// Estimate is the estimated capacity of the path to the subscriber; 0 when unknown.
	Estimate cc.Bitrate
	// Received is the rate the subscriber acknowledges receiving (the estimator's acknowledged
	// bitrate); 0 when unknown.
	Received cc.Bitrate
	// Congested says the estimator currently detects over-use (a delay-based congestion signal).
	Congested bool
	// FeedbackLoss is the loss fraction the estimator sees in its (transport-wide) feedback of the
	// last half second: faster than receiver reports; 0 when unknown. LossKnown says the feedback
	// reported enough packets to tell (a sample of ten or more).
	FeedbackLoss float64
	LossKnown    bool
	// RTT is the round-trip time to the subscriber (0 when unknown).
	RTT time.Duration
	// FeedbackAge is how long ago the estimator last had transport feedback (0 when it does not
	// say). Its congestion verdicts and loss are that old: when nothing is sent (video paused)
	// nothing comes back, and they are stale.
	FeedbackAge time.Duration
	// Unanswered is how long the oldest packet sent since the last feedback has waited for
	// feedback (0 when none has): on a path that carries nothing, not even the audio of a paused
	// subscriber, nothing arrives, so no feedback reports loss or delay, and this is what shows it.
	Unanswered time.Duration
	// Overload is the estimator's fast congestion signal: the path's queue grows while clearly
	// more is sent than arrives (a path cut below the sending rate), seen before the estimate
	// falls. Delivered is the rate at which the latest packets arrived (0 when unknown).
	Overload  bool
	Delivered cc.Bitrate
}

// Output is a decision: one target layer per input track, and the padding rate to send now.
type Output struct {
	Targets []Layer
	Probe   cc.Bitrate
	// Usage is what the decided targets cost (the sum of their measured rates).
	Usage cc.Bitrate
	// Reason says briefly why the targets changed (for logs and traces); empty when they did not.
	Reason string
	// Limited says the targets went down because the path does not carry more (the estimate,
	// congestion, or a pause for lack of bandwidth), not because of the subscriber's caps.
	Limited bool
}

// Policy decides layers for one subscriber. Implementations keep state between calls (timers,
// back-off) and are not safe for concurrent use: one per subscriber, called from one goroutine.
type Policy interface {
	Name() string
	// Decide fills out (Targets is resized to len(in.Tracks)).
	Decide(in *Input, out *Output)
}

// Names of the built-in policies.
const (
	NameBWE     = "bwe"
	NameProbe   = "probe"
	NameNetwork = "network"
	NameHybrid  = "hybrid"
)

// Names lists the built-in policies.
func Names() []string { return []string{NameBWE, NameProbe, NameNetwork, NameHybrid} }

// FollowsController says whether the named policy follows the network controller's decisions
// (network, hybrid): only then may a switch, rather than the SFU, thin a track (Track.Enforced).
func FollowsController(name string) bool { return name == NameNetwork || name == NameHybrid }

// Config holds the tunables of every built-in policy.
type Config struct {
	BWE   BWEConfig   `yaml:"bwe"`
	Probe ProbeConfig `yaml:"probe"`
}

// DefaultConfig returns the defaults documented in configs/strata.yaml.
func DefaultConfig() Config {
	return Config{BWE: DefaultBWEConfig(), Probe: DefaultProbeConfig()}
}

// New returns a fresh policy by name.
func New(name string, cfg Config) (Policy, error) {
	switch name {
	case NameBWE, "":
		return NewBWE(cfg.BWE), nil
	case NameProbe:
		return NewProbe(cfg.Probe), nil
	case NameNetwork:
		return NewNetwork(cfg.BWE), nil
	case NameHybrid:
		return NewHybrid(cfg.BWE), nil
	}
	return nil, fmt.Errorf("policy: unknown layer policy %q (want %s, %s, %s or %s)", name, NameBWE, NameProbe, NameNetwork, NameHybrid)
}
