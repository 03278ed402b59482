package policy

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Pausing video for lack of bandwidth, and resuming it.
//
// Every track gets its base layer before any gets more, and a base layer is kept while the
// estimate is only a little below it: an estimate can sit low without the path being full (GCC
// caps it at 1.5 × what is acknowledged, and it recovers from a loss burst slowly), a base layer is
// cheap, and video at its base layer over a path slightly too narrow degrades gently (a little
// queueing, a little loss that NACK repairs), whereas a paused video is a frozen picture. So, like
// Jitsi keeping the on-stage endpoint's lowest layer, strata does not pause on a dip. But when the
// estimate stays far below the base layers (under pause_factor, 50 %, of their cost, for
// pause_hold, 2 s) while the path shows it is full (loss in transport feedback, over-use, a growing
// queue: a base layer that gets through cleanly proves the path carries it, whatever the estimate
// says), the path cannot carry them: forwarding them only turns into loss for
// every stream of the subscriber, audio included. Then, as LiveKit and mediasoup do, the policy
// pauses video, cameras before screen shares, the last first, until the rest fits; audio keeps
// flowing.
//
// A paused track must come back by itself: with video paused only audio flows, and GCC's estimate
// cannot grow past 1.5 × what is sent, so waiting for the estimate alone would leave the video
// paused for good. The policy therefore probes: it pads up to up_factor × the cost of the next
// paused track's base layer for probe_duration; a probe without a congestion signal resumes the
// track, as does an estimate that covers the base layer (the allocator makes its padding GCC probe
// clusters, so a clean probe lifts the estimate too). Failed probes back off, the interval growing
// by half from probe_interval up to resume_backoff_max (8 s), since on a path that cannot carry
// the base layer a probe is loss for the audio too. Two things cut the wait short or keep it from
// growing, so that video comes back within seconds of the path:
//
//   - a path that recovered: when the audio alone found the path full (loss, over-use: a link cut
//     below even the audio; or no feedback at all for starvedSilence: a link that died) between
//     probes, and the feedback has been clean for recoveredAfter since, the path changed, and the
//     next probe goes out at once (a subscriber without audio sends nothing while paused: only
//     the probes can find its path back);
//   - a shared cause: when many subscribers of the server are congested at once (Input.Shared),
//     the cause is the server itself (its CPU stalled, its own link is full), not this path. Then
//     the video is not paused (its layers still go down), and a resume probe that fails does not
//     back off: the next one follows after probe_interval.
//
// Failed probes' intervals carry a random ±20 % (resumeJitter), so that subscribers paused at the
// same moment do not probe in step, every one of them at the same instant, again and again.

// pauseState is the BWE policy's bookkeeping for pausing and resuming.
type pauseState struct {
	lowSince   time.Duration // when the budget fell below pause_factor × the bases
	lastLow    time.Duration // when it was last seen below
	low        bool
	probing    bool
	probeStart time.Duration
	probeRate  cc.Bitrate
	probeEst   cc.Bitrate
	backoff    time.Duration
	next       time.Duration // no resume probe before
	lastResume time.Duration
	hasResumed bool
	lastFull   time.Duration // when the path last showed it was full (congestion or loss)
	wasFull    bool
	estAtPause cc.Bitrate

	// While paused: whether the audio alone found the path full (not during or right after a
	// probe), and since when the feedback has been clean.
	probeEnd     time.Duration
	audioStarved bool
	clean        bool
	cleanSince   time.Duration
}

const (
	// recoveredAfter: clean feedback for this long after the audio alone found the path full
	// means the path recovered.
	recoveredAfter = 500 * time.Millisecond
	// probeSettle: the path's state this soon after a resume probe is the probe's doing.
	probeSettle = time.Second
	// starvedSilence: no feedback for this long on what was sent means nothing arrives (feedback
	// comes every 50-100 ms on a path that delivers anything; the queue adds at most a few hundred
	// milliseconds).
	starvedSilence = time.Second
	// resumeJitter is the random share (in percent, either way) of each resume probe interval.
	resumeJitter = 20
)

// pauseEvidence: a pause needs the path to have shown it is full this recently, and the budget
// below the bases; a budget back up for longer ends the count.
const pauseEvidence = time.Second

// checkPause pauses tracks when the budget has stayed far below their base layers for PauseHold
// while the path showed it is full. It reports whether it decided.
func (b *BWE) checkPause(in *Input, congested bool, budget cc.Bitrate, p *plan, cur allocation, out *Output) bool {
	ps := &b.pause
	now := in.Now
	if fresh(in) && (congested || in.FeedbackLoss > b.cfg.SpatialLoss) {
		ps.lastFull, ps.wasFull = now, true
	}
	bases := p.usage(p.base())
	if bases <= 0 || b.lagging || in.Shared {
		ps.low = false
		return false
	}
	if budget >= scale(bases, b.cfg.PauseFactor) {
		// On a path that delivers a few packets a second the fast signals come and go with its
		// feedback: only a budget that stays up for a while ends the count.
		if now-ps.lastLow > pauseEvidence {
			ps.low = false
		}
		return false
	}
	if !ps.low {
		ps.low, ps.lowSince = true, now
	}
	ps.lastLow = now
	// The base layers going through without loss or queueing prove the path carries them, however
	// low the estimate (it can lag: after probes that failed, or a loss burst).
	if now-ps.lowSince < b.cfg.PauseHold || !ps.wasFull || now-ps.lastFull > pauseEvidence {
		return false
	}
	next := p.pauseToFit(cur, budget)
	ps.low = false
	ps.probing = false
	if ps.hasResumed && now-ps.lastResume <= b.cfg.FailedUpgradeWindow {
		ps.backoff = b.nextResumeBackoff() // the resume failed
	} else {
		ps.backoff = b.cfg.ProbeInterval
	}
	ps.next = now + b.jitter(ps.backoff)
	ps.estAtPause = in.Estimate
	ps.audioStarved, ps.clean, ps.probeEnd = false, false, now
	b.downgrade(now)
	b.set(out, p, next, "the path does not carry the base layer: video paused")
	out.Limited = true
	return true
}

// checkResume brings paused tracks back, one at a time: when the estimate covers the next one's
// base layer, or after a clean probe up to it. It reports whether it decided (while a track is
// paused nothing else climbs: every track gets its base layer before any gets more).
func (b *BWE) checkResume(in *Input, congested bool, p *plan, cur allocation, out *Output) bool {
	ps := &b.pause
	next, ok := p.nextResume(cur)
	if !ok {
		ps.probing = false
		return false
	}
	now, est, usage := in.Now, in.Estimate, p.usage(cur)
	need := p.usage(next)
	// With the video paused little or nothing is sent, so the estimator's verdicts may be old:
	// only fresh ones count, and a probe must itself bring feedback back to succeed.
	full := fresh(in) && (congested || in.FeedbackLoss > b.cfg.LossThreshold)
	recovered := b.pathRecovered(in, full)
	switch {
	case est >= need && est > ps.estAtPause*probeMeasuredRise/100 && !full:
		// Only an estimate that rose since the pause counts: the estimate a path collapsed under
		// can be stale (the pause came from faster signals), and nothing is sent to correct it.
		b.resume(in, p, next, usage, "the estimate covers the base layer again", out)
	case ps.probing && (full || est < ps.probeEst*9/10 || b.probeUnjudged(in)):
		ps.probing, ps.probeEnd = false, now
		if ps.backoff = b.nextResumeBackoff(); in.Shared {
			ps.backoff = b.cfg.ProbeInterval // the server's trouble, not the path's
		}
		ps.next = now + b.jitter(ps.backoff)
		b.set(out, p, cur, "")
	case ps.probing && now-ps.probeStart >= b.cfg.ProbeDuration && in.LossKnown:
		b.resume(in, p, next, usage, "probe succeeded: video resumed", out)
	case ps.probing:
		out.Probe = max(ps.probeRate-usage, 0)
		b.set(out, p, cur, "")
	default:
		if b.cfg.Probing && in.CanProbe && (now >= ps.next || recovered) && !full {
			if recovered {
				ps.backoff, ps.audioStarved = b.cfg.ProbeInterval, false
			}
			ps.probing, ps.probeStart, ps.probeEst = true, now, est
			ps.probeRate = scale(need, b.cfg.UpFactor)
			out.Probe = max(ps.probeRate-usage, 0)
		}
		b.set(out, p, cur, "")
	}
	return true
}

// resume gives the next paused track its base layer. After a probe the estimate may still be below
// it (an estimator that does not see the probe grows slowly): as after a probed upgrade, the policy
// then trusts the probe while the estimate grows, instead of pausing again (checkLag).
func (b *BWE) resume(in *Input, p *plan, next allocation, before cc.Bitrate, reason string, out *Output) {
	ps := &b.pause
	now := in.Now
	ps.probing = false
	ps.lastResume, ps.hasResumed = now, true
	ps.next = now + b.jitter(ps.backoff)
	b.upgrade(now)
	if est := in.Estimate; est < p.usage(next) {
		b.lagging, b.lagFloor, b.fallbackUsage = true, est, before
		b.lagHigh, b.lagHighAt = est, now
	}
	b.set(out, p, next, reason)
}

// probeUnjudged: a resume probe failed to show anything, when it lasted ProbeDuration without
// feedback, or ProbeDurationMax without feedback on enough packets to tell their loss (a probe of a
// cheap base layer on a path that delivers a few packets a second; it carries on meanwhile).
func (b *BWE) probeUnjudged(in *Input) bool {
	long := in.Now - b.pause.probeStart
	return (long >= b.cfg.ProbeDuration && in.FeedbackAge > long) || (long >= b.cfg.ProbeDurationMax && !in.LossKnown)
}

// pathRecovered watches the path while video is paused and only audio flows: it reports whether
// the audio alone found the path full since the last probe settled, and the feedback has been clean
// for recoveredAfter since.
func (b *BWE) pathRecovered(in *Input, full bool) bool {
	ps := &b.pause
	now := in.Now
	switch {
	case full || b.silent(in):
		if !ps.probing && now-ps.probeEnd >= probeSettle {
			ps.audioStarved = true
		}
		ps.clean = false
	case !fresh(in) || ps.probing:
		ps.clean = false // no verdict, or one about the probe
	case !ps.clean:
		ps.clean, ps.cleanSince = true, now
	}
	return ps.audioStarved && ps.clean && now-ps.cleanSince >= recoveredAfter
}

// silent says that what was sent since the last probe settled (the audio) has had no feedback at
// all for starvedSilence: the path carries nothing, so no feedback can say it is full.
func (b *BWE) silent(in *Input) bool {
	ps := &b.pause
	if in.Unanswered <= 0 || ps.probing {
		return false
	}
	from := max(in.Now-in.Unanswered, ps.probeEnd+probeSettle)
	return in.Now-from >= starvedSilence
}

// jitter spreads an interval by a random ±resumeJitter %.
func (b *BWE) jitter(d time.Duration) time.Duration {
	return d + d*time.Duration(b.rng.IntN(2*resumeJitter+1)-resumeJitter)/100
}

// staleFeedback: verdicts from feedback older than this are stale.
const staleFeedback = 500 * time.Millisecond

// fresh reports whether the estimator's congestion verdicts and loss are recent.
func fresh(in *Input) bool { return in.FeedbackAge < staleFeedback }

// nextResumeBackoff grows the interval between resume probes by half (as LiveKit's probe
// regulator does), from ProbeInterval up to ResumeBackoffMax: gentler than doubling, since a path
// that comes back should not wait long for the next probe.
func (b *BWE) nextResumeBackoff() time.Duration {
	ps := &b.pause
	return min(max(ps.backoff*3/2, b.cfg.ProbeInterval), b.cfg.ResumeBackoffMax)
}
