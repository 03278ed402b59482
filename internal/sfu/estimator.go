package sfu

import (
	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// Estimator is the source of a subscriber's bandwidth estimate (bwe.Estimator is one): the whole
// contract between the allocator and congestion control.
type Estimator interface {
	// Path is every signal the allocator uses (estimate, delay trend, loss, overload, how fresh
	// the feedback is), taken as one snapshot: the allocator reads it once per decision.
	Path() policy.Path
	// OnUpdate installs a callback run after every feedback message, so that the allocator
	// decides at once rather than on its next tick (nil removes it). The callback does not block.
	OnUpdate(func())
}

// Prober sends an estimator's probe clusters: the allocator pads at a cluster's rate and tags what
// goes out meanwhile, so that the estimate learns from the allocator's padding what the path
// carries, as libwebrtc's pacer does for its controller's clusters.
type Prober interface {
	// NextProbe hands out the next cluster to send.
	NextProbe() (cc.ProbeCluster, bool)
	// RequestProbe asks for a cluster at rate (nothing happens when rate is not above the
	// estimate).
	RequestProbe(rate cc.Bitrate)
	// BeginProbe tags everything sent until EndProbe with the cluster's id; ProbeSent counts it.
	BeginProbe(id int)
	ProbeSent() (packets, bytes int)
	EndProbe()
}

// NoProber is the Prober of an estimator that does not probe: no cluster is ever due.
type NoProber struct{}

// NextProbe implements Prober.
func (NoProber) NextProbe() (cc.ProbeCluster, bool) { return cc.ProbeCluster{}, false }

// RequestProbe implements Prober.
func (NoProber) RequestProbe(cc.Bitrate) {}

// BeginProbe implements Prober.
func (NoProber) BeginProbe(int) {}

// ProbeSent implements Prober.
func (NoProber) ProbeSent() (packets, bytes int) { return 0, 0 }

// EndProbe implements Prober.
func (NoProber) EndProbe() {}
