package sfu

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// The steady shortcut: most subscribers of a healthy server already receive every track at the
// best layer it has, on a path whose estimate is far above what that costs. Their allocator still
// woke 20 times a second on its tick and 10 more on feedback, to run a policy that then changed
// nothing (and built its ladders anew each time). So a full decision that finds the subscriber
// steady lets the decisions after it stop early, after reading the estimator's snapshot and the
// tracks' layer rates only, while
//
//   - nothing happened to the subscriber's tracks (no track added or removed, no new caps, pause
//     or network decision: any event forgets the steady state),
//   - less than steadyRecheck passed since that full decision (the policy still sees the
//     subscriber once a second, with the receiver-report loss gathered meanwhile),
//   - the estimate is still at least steadyHeadroom times what the allocation cost then, and the
//     estimator shows no congestion (no over-use, no overload, transport feedback losing at most
//     steadyLoss, feedback not outstanding for steadyUnanswered or longer), and
//   - every track's publisher still sends the same layers (a layer that appears or disappears
//     changes what the best layer is).
//
// A subscriber is steady when it has an estimator, every one of its video tracks is placed (its
// layers measured), none is paused (by the API or for lack of bandwidth) or thinned by a switch,
// each is targeted at the top of its ladder (policy.Best: nothing to upgrade to) and already
// forwarded at it, no probe runs or is asked for, and the path's signals are as above. So an
// estimate that falls below the headroom, a congestion signal or a new layer reaches the policy at
// the next tick or feedback, as before; only decisions that could not change anything are left
// out. (The policy's own state needs no calls meanwhile: with every track at its best layer and
// no congestion it holds no pending upgrade, probe or pause.)
const (
	steadyRecheck    = time.Second
	steadyHeadroom   = 2
	steadyLoss       = 0.02
	steadyUnanswered = 500 * time.Millisecond
)

// steadyState is the last full decision's verdict.
type steadyState struct {
	on     bool
	at     time.Duration
	usage  cc.Bitrate
	layers []uint16 // per track, the layers its rates showed (availableLayers)
}

func (s *steadyState) forget() { s.on = false }

// record takes a full decision's verdict: in and out are its input and output, probing whether a
// probe cluster runs.
func (s *steadyState) record(in *policy.Input, out *policy.Output, tracks int, probing bool) {
	s.on = false
	if len(in.Tracks) != tracks || tracks == 0 || probing || out.Probe > 0 || !quietPath(&in.Path) ||
		in.Loss > steadyLoss || in.Estimate < steadyHeadroom*out.Usage {
		return
	}
	s.layers = s.layers[:0]
	for i := range in.Tracks {
		t := &in.Tracks[i]
		to := out.Targets[i]
		if t.Paused || t.Starved || t.Enforced || to != policy.Best(t) || t.Current != to {
			return
		}
		s.layers = append(s.layers, availableLayers(&t.Rates))
	}
	s.on, s.at, s.usage = true, in.Now, out.Usage
}

// holds says whether a decision at now may stop early, given the estimator's snapshot p.
func (s *steadyState) holds(now time.Duration, p *policy.Path, tracks []*allocTrack) bool {
	if !s.on || now < s.at || now-s.at >= steadyRecheck || len(tracks) != len(s.layers) ||
		!quietPath(p) || p.Estimate < steadyHeadroom*s.usage {
		return false
	}
	for i, t := range tracks {
		rates := t.d.Receiver().Rates(now)
		if availableLayers(&rates) != s.layers[i] {
			return false
		}
	}
	return true
}

// quietPath: the estimator sees no congestion and hears back in time.
func quietPath(p *policy.Path) bool {
	return !p.Congested && !p.Overload && !(p.LossKnown && p.FeedbackLoss > steadyLoss) && p.Unanswered < steadyUnanswered
}

// availableLayers is a bit per spatial and temporal layer that has a rate.
func availableLayers(r *policy.Rates) uint16 {
	var bits uint16
	for s := range policy.MaxSpatial {
		for t := range policy.MaxTemporal {
			if r[s][t] > 0 {
				bits |= 1 << (s*policy.MaxTemporal + t)
			}
		}
	}
	return bits
}
