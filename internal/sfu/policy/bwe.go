package policy

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// BWEConfig tunes the estimate-driven policy.
type BWEConfig struct {
	// UpFactor: an upgrade needs the estimate (or a successful probe) to exceed the new allocation's
	// rate by this factor.
	UpFactor float64 `yaml:"up_factor"`
	// DownFactor: a downgrade follows when the estimate falls below this fraction of the current
	// allocation (the gap to UpFactor is the hysteresis that keeps noise from flipping layers).
	DownFactor float64 `yaml:"down_factor"`
	// UpHold and UpHoldRTTs: the estimate must stay above UpFactor × the next allocation for
	// max(UpHold, UpHoldRTTs × RTT) before an upgrade.
	UpHold     time.Duration `yaml:"up_hold"`
	UpHoldRTTs int           `yaml:"up_hold_rtts"`
	// FailedUpgradeWindow: a downgrade this soon after an upgrade means the upgrade failed; further
	// upgrades then wait UpgradeBackoff, doubling per failure up to UpgradeBackoffMax.
	FailedUpgradeWindow time.Duration `yaml:"failed_upgrade_window"`
	UpgradeBackoff      time.Duration `yaml:"upgrade_backoff"`
	UpgradeBackoffMax   time.Duration `yaml:"upgrade_backoff_max"`
	// Probing sends padding up to the next allocation's rate (× UpFactor) for ProbeDuration when
	// the estimate alone does not allow an upgrade; a probe that ends without a congestion signal
	// (over-use, loss in reports or transport feedback, overload) upgrades, to what the estimate
	// measured when it rose during the probe (the allocator sends probes as the estimator's probe
	// clusters). Probes start at most every ProbeInterval; after a failed probe the interval
	// doubles up to ProbeBackoffMax, and is reset once the estimate grows past the failed probe's
	// rate; after a successful one the next may follow after ProbeDuration. A probe aims at up to
	// ProbeMultiplier × the current rate when more than one step is wanted.
	Probing         bool          `yaml:"probing"`
	ProbeDuration   time.Duration `yaml:"probe_duration"`
	ProbeInterval   time.Duration `yaml:"probe_interval"`
	ProbeBackoffMax time.Duration `yaml:"probe_backoff_max"`
	ProbeMultiplier float64       `yaml:"probe_multiplier"`
	// ProbeDurationMax: after an upgrade that failed, probes last twice as long (up to this) until
	// one succeeds, so that a path only slightly too narrow shows its queue before the next attempt.
	ProbeDurationMax time.Duration `yaml:"probe_duration_max"`
	// LossThreshold: receiver-reported loss above this is a congestion signal.
	LossThreshold float64 `yaml:"loss_threshold"`
	// A downgrade first drops temporal layers only; spatial layers go down as the estimate asks
	// once the path loses more than SpatialLoss (feedback or reports), or when the estimate stayed
	// low for SpatialHold. An estimate can dip without the path being full (a noisy delay
	// detector, an estimate that only tracks what is sent); loss says the path is full.
	SpatialLoss float64       `yaml:"spatial_loss"`
	SpatialHold time.Duration `yaml:"spatial_hold"`
	// TrustTimeout: after a probe-based upgrade the estimate lags behind what the probe showed (the
	// estimator only grows it gradually). While it keeps growing, only a congestion signal
	// (over-use, loss, a falling estimate) downgrades; once it has not grown for this long it is
	// trusted again.
	TrustTimeout time.Duration `yaml:"trust_timeout"`
	// PauseFactor and PauseHold: video is paused (base layer and all, audio keeps flowing) only
	// when the estimate stays below PauseFactor × the cost of the base layers for PauseHold while
	// the path shows it is full; paused video is probed for and resumed, the probe interval growing
	// by half after failures from ProbeInterval up to ResumeBackoffMax. See pause.go for why.
	PauseFactor      float64       `yaml:"pause_factor"`
	PauseHold        time.Duration `yaml:"pause_hold"`
	ResumeBackoffMax time.Duration `yaml:"resume_backoff_max"`
}

// DefaultBWEConfig returns the defaults.
func DefaultBWEConfig() BWEConfig {
	return BWEConfig{
		UpFactor: 1.1, DownFactor: 0.9, UpHold: time.Second, UpHoldRTTs: 5,
		FailedUpgradeWindow: 5 * time.Second, UpgradeBackoff: time.Second, UpgradeBackoffMax: 30 * time.Second,
		Probing: true, ProbeDuration: 500 * time.Millisecond, ProbeInterval: time.Second,
		ProbeBackoffMax: time.Second, ProbeMultiplier: 3, ProbeDurationMax: time.Second,
		LossThreshold: 0.1, SpatialLoss: 0.02, SpatialHold: 2 * time.Second, TrustTimeout: 5 * time.Second,
		PauseFactor: 0.5, PauseHold: 2 * time.Second, ResumeBackoffMax: 8 * time.Second,
	}
}

// BWE allocates each subscriber's estimated bandwidth over its tracks: every track gets its base
// layer first, screen shares before cameras, then one rung per track per round while it fits.
// Downgrades follow the estimate at once (temporal layers go first, as they are the cheapest
// rungs); upgrades need headroom shown by the estimate for a while or by a probe, and back off
// after failures so that the allocation does not oscillate.
type BWE struct {
	cfg BWEConfig

	congestedRun int
	congestedAt  time.Duration

	upPending bool
	upSince   time.Duration

	upgraded       bool
	lastUpgrade    time.Duration
	upgradeBackoff time.Duration
	nextUpgrade    time.Duration

	probing      bool
	probeStart   time.Duration
	probeRate    cc.Bitrate
	probeEst     cc.Bitrate
	probeBackoff time.Duration
	probeLen     time.Duration
	nextProbe    time.Duration
	failedRate   cc.Bitrate // the rate of the last failed probe (0: none since a success)
	failedEst    cc.Bitrate // the estimate when it started

	lowSince time.Duration // when the estimate fell below the allocation (0: it is not)

	lagging       bool
	lagHighAt     time.Duration
	lagHigh       cc.Bitrate
	lagFloor      cc.Bitrate
	fallbackUsage cc.Bitrate

	pause pauseState
	rng   *rand.Rand // resume probe jitter
}

// overuseSpacing: two over-use verdicts count as "over-use twice in a row" only this far apart,
// so that a decision the allocator runs right after a feedback message and one on its timer do not
// both count the same verdict.
const overuseSpacing = 40 * time.Millisecond

// deliveredShare is the share of the delivered rate an overloaded path's allocation may use (the
// rest drains the queue).
const deliveredShare = 0.9

// probeMeasuredRise: an estimate that rose by more than this percentage during a probe took the
// probe into account.
const probeMeasuredRise = 105

// policySeed seeds each policy's random source differently, and reproducibly in one process.
var policySeed atomic.Uint64

// NewBWE returns the policy with cfg (zero fields take their defaults).
func NewBWE(cfg BWEConfig) *BWE {
	d := DefaultBWEConfig()
	if cfg.UpFactor <= 1 {
		cfg.UpFactor = d.UpFactor
	}
	if cfg.DownFactor <= 0 || cfg.DownFactor > 1 {
		cfg.DownFactor = d.DownFactor
	}
	if cfg.UpHold <= 0 {
		cfg.UpHold = d.UpHold
	}
	if cfg.ProbeDuration <= 0 {
		cfg.ProbeDuration = d.ProbeDuration
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = d.ProbeInterval
	}
	cfg.ProbeBackoffMax = max(cfg.ProbeBackoffMax, cfg.ProbeInterval)
	cfg.ProbeDurationMax = max(cfg.ProbeDurationMax, cfg.ProbeDuration)
	if cfg.ProbeMultiplier < 1 {
		cfg.ProbeMultiplier = d.ProbeMultiplier
	}
	if cfg.LossThreshold <= 0 {
		cfg.LossThreshold = d.LossThreshold
	}
	if cfg.SpatialLoss <= 0 {
		cfg.SpatialLoss = d.SpatialLoss
	}
	if cfg.SpatialHold <= 0 {
		cfg.SpatialHold = d.SpatialHold
	}
	if cfg.UpgradeBackoff <= 0 {
		cfg.UpgradeBackoff = d.UpgradeBackoff
	}
	cfg.UpgradeBackoffMax = max(cfg.UpgradeBackoffMax, cfg.UpgradeBackoff)
	if cfg.PauseFactor <= 0 || cfg.PauseFactor > 1 {
		cfg.PauseFactor = d.PauseFactor
	}
	if cfg.PauseHold <= 0 {
		cfg.PauseHold = d.PauseHold
	}
	cfg.ResumeBackoffMax = max(cfg.ResumeBackoffMax, cfg.ProbeInterval)
	return &BWE{
		cfg: cfg, probeBackoff: cfg.ProbeInterval, probeLen: cfg.ProbeDuration, pause: pauseState{backoff: cfg.ProbeInterval},
		rng: rand.New(rand.NewPCG(policySeed.Add(1), 0)),
	}
}

// Name returns "bwe".
func (b *BWE) Name() string { return NameBWE }

// Decide implements Policy.
func (b *BWE) Decide(in *Input, out *Output) {
	now := in.Now
	p := newPlan(in.Tracks)
	cur := p.fromTargets(in.Tracks)
	usage := p.usage(cur)
	out.Probe, out.Reason, out.Limited = 0, "", false
	b.countOveruse(in)
	congested := b.congestedRun >= 2 || in.Loss > b.cfg.LossThreshold || in.Overload
	if b.upgraded && now-b.lastUpgrade > b.cfg.FailedUpgradeWindow {
		b.upgraded, b.upgradeBackoff, b.probeLen = false, 0, b.cfg.ProbeDuration // the last upgrade held
	}
	est := in.Estimate
	if est <= 0 {
		b.probing, b.upPending = false, false
		b.set(out, p, cur, "")
		return
	}
	// What the path carries now: the estimate, or less when the path is overloaded before the
	// estimate shows it (the queue grows and less arrives than is sent).
	budget := est
	if in.Overload && in.Delivered > 0 {
		budget = min(budget, scale(in.Delivered, deliveredShare))
	}
	if placed := b.placeNewTracks(in, budget, p, cur); placed != nil {
		b.set(out, p, placed, "new track")
		return
	}
	if b.lagging && b.checkLag(in, budget, usage, congested, p, out) {
		return
	}
	if !b.lagging && budget < scale(usage, b.cfg.DownFactor) {
		if b.lowSince == 0 {
			b.lowSince = now
		}
		next, reason := p.allocate(budget), "estimate below the allocation"
		if in.Overload {
			reason = "the path delivers less than is sent"
		}
		if !b.spatialDownAllowed(in, now) {
			next, reason = p.keepSpatial(next, cur), reason+" (temporal layers first)"
		}
		if p.usage(next) < usage {
			b.downgrade(now)
			b.set(out, p, next, reason)
			out.Limited = true
			return
		}
	} else {
		b.lowSince = 0
	}
	if b.checkPause(in, congested, budget, p, cur, out) || b.checkResume(in, congested, p, cur, out) {
		b.probing, b.upPending = false, false
		return
	}
	if b.probing && b.checkProbe(now, in, usage, congested, p, cur, out) {
		return
	}
	if b.upgradeFromEstimate(now, budget, usage, in.RTT, congested, p, out) {
		return
	}
	b.maybeStartProbe(in, usage, congested && fresh(in), p, cur, out)
	b.set(out, p, cur, "")
}

// countOveruse counts over-use verdicts in a row, at most one per overuseSpacing.
func (b *BWE) countOveruse(in *Input) {
	switch {
	case !in.Congested:
		b.congestedRun = 0
	case b.congestedRun == 0 || in.Now-b.congestedAt >= overuseSpacing:
		b.congestedRun++
		b.congestedAt = in.Now
	}
}

// spatialDownAllowed: loss or overload shows the path is full, or the estimate has stayed low long
// enough.
func (b *BWE) spatialDownAllowed(in *Input, now time.Duration) bool {
	return in.Overload || in.FeedbackLoss > b.cfg.SpatialLoss || in.Loss > b.cfg.SpatialLoss || now-b.lowSince >= b.cfg.SpatialHold
}

// checkLag handles the time after a probe-based upgrade, while the estimate has not caught up.
func (b *BWE) checkLag(in *Input, est, usage cc.Bitrate, congested bool, p *plan, out *Output) bool {
	now := in.Now
	switch {
	case est >= usage:
		b.lagging = false
	case congested || in.FeedbackLoss > b.cfg.LossThreshold || est < b.lagFloor*85/100:
		b.lagging = false
		b.probing = false
		b.downgrade(now)
		fallback := b.fallbackUsage
		if in.Overload {
			fallback = min(fallback, est) // est is the budget here: less than arrives
		}
		b.set(out, p, p.allocate(fallback), "congestion after a probed upgrade")
		out.Limited = true
		return true
	case est > b.lagHigh:
		b.lagHigh, b.lagHighAt = est, now
	case now-b.lagHighAt > b.cfg.TrustTimeout:
		b.lagging = false
	}
	return false
}

// checkProbe follows a running probe: it fails on any congestion signal (over-use, loss, a falling
// estimate); when it ends cleanly it upgrades to what the probe rate allows. (The acknowledged
// rate, Input.Received, lags a 500 ms probe too much to judge it: it is not used here.)
func (b *BWE) checkProbe(now time.Duration, in *Input, usage cc.Bitrate, congested bool, p *plan, cur allocation, out *Output) bool {
	if congested || in.Estimate < b.probeEst*9/10 || in.Loss > b.cfg.LossThreshold || in.FeedbackLoss > b.cfg.LossThreshold {
		// A full drop-tail queue does not grow: the probe's excess is simply lost, which
		// transport feedback shows long before a receiver report.
		b.failProbe(now)
		b.set(out, p, cur, "")
		return true
	}
	if now-b.probeStart < b.probeLen {
		out.Probe = max(b.probeRate-usage, 0)
		b.set(out, p, cur, "")
		return true
	}
	b.probing = false
	shown := b.probeRate
	if est := in.Estimate; est > b.probeEst*probeMeasuredRise/100 {
		// The estimator measured the probe (the allocator sends it as probe clusters): what it
		// found is a better bound than the absence of a congestion signal, which a probe only a
		// little above the path's capacity does not raise within its duration.
		shown = min(shown, est)
	}
	next := p.allocate(cc.BitrateFromFloat(float64(shown) / b.cfg.UpFactor))
	if p.usage(next) <= usage {
		b.failProbe(now)
		return false
	}
	b.probeBackoff, b.probeLen, b.failedRate = b.cfg.ProbeInterval, b.cfg.ProbeDuration, 0
	b.nextProbe = now + b.cfg.ProbeDuration // settle (the new layer's keyframe), then probe on
	b.upgradeBackoff, b.nextUpgrade = 0, 0  // the path showed it carries the probe
	b.upgrade(now)
	if est := in.Estimate; est < p.usage(next) {
		b.lagging, b.lagFloor, b.fallbackUsage = true, est, usage
		b.lagHigh, b.lagHighAt = est, now
	}
	b.set(out, p, next, "probe succeeded")
	return true
}

func (b *BWE) failProbe(now time.Duration) {
	b.probing = false
	b.probeBackoff = min(2*b.probeBackoff, b.cfg.ProbeBackoffMax)
	b.nextProbe = now + b.probeBackoff
	b.failedRate, b.failedEst = b.probeRate, b.probeEst
}

// upgradeFromEstimate upgrades once the estimate has shown enough headroom for long enough, and
// the path no congestion.
func (b *BWE) upgradeFromEstimate(now time.Duration, est, usage cc.Bitrate, rtt time.Duration, congested bool, p *plan, out *Output) bool {
	cand := p.allocate(cc.BitrateFromFloat(float64(est) / b.cfg.UpFactor))
	if congested || p.usage(cand) <= usage || now < b.nextUpgrade {
		b.upPending = false
		return false
	}
	if !b.upPending {
		b.upPending, b.upSince = true, now
	}
	hold := max(b.cfg.UpHold, time.Duration(b.cfg.UpHoldRTTs)*rtt)
	if now-b.upSince < hold {
		return false
	}
	b.upPending, b.probing = false, false
	b.upgrade(now)
	b.set(out, p, cand, "estimate above the next allocation")
	return true
}

func (b *BWE) maybeStartProbe(in *Input, usage cc.Bitrate, congested bool, p *plan, cur allocation, out *Output) {
	now := in.Now
	if b.failedRate > 0 && in.Estimate >= b.failedRate && in.Estimate > b.failedEst*probeMeasuredRise/100 {
		// The estimate has since grown past the rate of the last failed probe (the estimator's
		// own probes, or a path that recovered): the back-off no longer says anything. (An
		// estimate that was already above it, stale after a cut the faster signals caught, does
		// not count.)
		b.failedRate, b.probeBackoff, b.nextProbe = 0, b.cfg.ProbeInterval, min(b.nextProbe, now)
	}
	// Probes go on while upgrades from the estimate back off: a probe is itself the test the
	// back-off waits for (it lasts longer after a failed upgrade), and a path that recovered from a
	// cut shows it only to a probe (the estimate does not grow past what is sent). Not into a path
	// that is congested right now.
	if !b.cfg.Probing || !in.CanProbe || b.probing || b.upPending || now < b.nextProbe || congested {
		return
	}
	best := p.usage(p.best())
	next, ok := p.nextStep(cur)
	if !ok || best <= usage {
		return
	}
	up := b.cfg.UpFactor
	rate := max(scale(p.usage(next), up), min(scale(usage, b.cfg.ProbeMultiplier), scale(best, up)))
	b.probing, b.probeStart, b.probeRate, b.probeEst = true, now, rate, in.Estimate
	out.Probe = max(rate-usage, 0)
}

// placeNewTracks gives tracks that had no layer yet the best rung the estimate allows at once
// (there is no upgrade to hold back: nothing was being sent), keeping the others where they are.
// It returns nil when no track is new.
func (b *BWE) placeNewTracks(in *Input, est cc.Bitrate, p *plan, cur allocation) allocation {
	fresh := false
	for i := range in.Tracks {
		fresh = fresh || (in.Tracks[i].Target.Spatial < 0 && cur[i] >= 0)
	}
	if !fresh {
		return nil
	}
	next := p.allocate(cc.BitrateFromFloat(float64(est) / b.cfg.UpFactor))
	for i := range in.Tracks {
		if in.Tracks[i].Target.Spatial >= 0 {
			next[i] = cur[i]
		}
	}
	return next
}

func (b *BWE) upgrade(now time.Duration) {
	b.upgraded, b.lastUpgrade = true, now
}

// downgrade records a downgrade; one soon after an upgrade makes further upgrades back off.
func (b *BWE) downgrade(now time.Duration) {
	b.probing, b.upPending = false, false
	if !b.upgraded || now-b.lastUpgrade > b.cfg.FailedUpgradeWindow {
		return
	}
	b.upgraded = false
	b.probeLen = min(2*b.probeLen, b.cfg.ProbeDurationMax)
	if b.upgradeBackoff == 0 {
		b.upgradeBackoff = b.cfg.UpgradeBackoff
	} else {
		b.upgradeBackoff = min(2*b.upgradeBackoff, b.cfg.UpgradeBackoffMax)
	}
	b.nextUpgrade = now + b.upgradeBackoff
}

func (b *BWE) set(out *Output, p *plan, a allocation, reason string) {
	out.Targets = p.layers(a, out.Targets)
	out.Usage = p.usage(a)
	out.Reason = reason
}

func scale(r cc.Bitrate, f float64) cc.Bitrate { return cc.BitrateFromFloat(float64(r) * f) }
