package sfu

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

const (
	// clusterRequestEvery: while the policy probes (for 500 ms or more), a GCC probe cluster at the
	// probe's total rate is asked for this often, so that the estimate follows what the probe shows.
	clusterRequestEvery = 200 * time.Millisecond
	// clusterMaxSpan ends a cluster that did not reach its size (nothing to pad on).
	clusterMaxSpan = 100 * time.Millisecond
	// padBurstMax bounds the padding that may build up while a track could not pad.
	padBurstMax = 100 * time.Millisecond
)

// probeRunner paces out padding every padding tick: the policy's probe (its padding rate) and the
// estimator's probe clusters (padding up to the cluster's rate, everything sent meanwhile tagged).
// It runs on the allocator's goroutine.
type probeRunner struct {
	pr   Prober
	tick time.Duration

	policyRate, usage cc.Bitrate
	requested         time.Duration

	cluster   cc.ProbeCluster
	active    bool
	clusterAt time.Duration
	padDue    float64
}

func (r *probeRunner) init(pr Prober, tick time.Duration) {
	r.pr, r.tick = pr, tick
}

// setPolicyProbe takes a decision's padding rate and the rate of its allocation. While the policy
// probes, it asks the estimator for a cluster at the probe's total rate: at the start, then every
// clusterRequestEvery.
func (r *probeRunner) setPolicyProbe(now time.Duration, probe, usage cc.Bitrate) {
	starting := probe > 0 && r.policyRate == 0
	r.policyRate, r.usage = probe, usage
	if probe > 0 && (starting || now-r.requested >= clusterRequestEvery) {
		r.pr.RequestProbe(usage + probe)
		r.requested = now
	}
}

// pad sends the padding due since the last tick on the first track that can carry it.
func (r *probeRunner) pad(now time.Duration, tracks []*allocTrack) {
	rate := max(r.policyRate, r.clusterRate(now, tracks))
	if rate <= 0 {
		r.padDue = 0
		return
	}
	r.padDue += rate.Bps() * r.tick.Seconds() / 8
	for _, t := range tracks {
		if sent := t.d.Pad(int(r.padDue)); sent > 0 {
			r.padDue -= float64(sent)
			break
		}
	}
	r.padDue = min(max(r.padDue, 0), rate.Bps()*padBurstMax.Seconds()/8)
}

// clusterRate runs the estimator's clusters one at a time: it starts the next one when a track can
// pad, ends it once the cluster's packets and bytes went out (media sent meanwhile counts, as in
// libwebrtc's pacer), and returns the padding rate the cluster needs now.
func (r *probeRunner) clusterRate(now time.Duration, tracks []*allocTrack) cc.Bitrate {
	if r.active {
		packets, bytes := r.pr.ProbeSent()
		if (packets >= r.cluster.MinPackets && bytes >= r.cluster.MinBytes) || now-r.clusterAt > clusterMaxSpan {
			r.pr.EndProbe()
			r.active = false
			return 0
		}
		return max(r.cluster.Rate-r.usage, 0)
	}
	if !canPad(tracks) {
		return 0 // leave the cluster queued until something can carry it
	}
	c, ok := r.pr.NextProbe()
	if !ok {
		return 0
	}
	r.cluster, r.active, r.clusterAt = c, true, now
	r.pr.BeginProbe(c.ID)
	return max(c.Rate-r.usage, 0)
}

// wake starts a queued cluster when none runs and a track can carry it, and reports whether
// padding is due (a cluster or the policy's probe), i.e. whether the padding ticker must run.
func (r *probeRunner) wake(now time.Duration, tracks []*allocTrack) bool {
	if !r.active && canPad(tracks) {
		if c, ok := r.pr.NextProbe(); ok {
			r.cluster, r.active, r.clusterAt = c, true, now
			r.pr.BeginProbe(c.ID)
		}
	}
	return r.active || r.policyRate > 0
}

// stop ends a cluster in progress (the allocator is closing).
func (r *probeRunner) stop() {
	if r.active {
		r.pr.EndProbe()
		r.active = false
	}
}

func canPad(tracks []*allocTrack) bool {
	for _, t := range tracks {
		if t.d.CanPad() {
			return true
		}
	}
	return false
}
