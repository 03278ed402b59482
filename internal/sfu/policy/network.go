package policy

import "fmt"

// Network follows the network controller (seed 000's proposal): each track gets as many rungs of
// its ladder as the controller allows for its subscription (at least the base: strata never pauses
// a track on its own, as the paper's switches never drop the base layer). It does not probe, since
// the controller already knows what the path carries.
//
// A track with no decision yet (NetKnown unset: the controller is unreachable or has not decided)
// gets what the bwe policy would give it, so media keeps flowing when the controller is down. The
// embedded bwe policy runs on every call so that its state is warm when it is needed.
type Network struct {
	bwe    *BWE
	hybrid bool
	own    []Layer
}

// NewNetwork returns the network policy; cfg tunes its bwe fallback.
func NewNetwork(cfg BWEConfig) *Network { return &Network{bwe: NewBWE(cfg)} }

// NewHybrid returns the hybrid policy: per track the lower of the controller's decision and the
// bwe policy's choice (the subscriber's own estimate), so that a path the controller cannot see
// (a congested access link beyond its topology) still limits the layers. A decision a switch
// enforces (Track.Enforced) is followed as the network policy does: the estimate then counts the
// switch's drops as loss and would pull the track below what the switch passes.
func NewHybrid(cfg BWEConfig) *Network { return &Network{bwe: NewBWE(cfg), hybrid: true} }

// Name returns "network" or "hybrid".
func (n *Network) Name() string {
	if n.hybrid {
		return NameHybrid
	}
	return NameNetwork
}

// Decide implements Policy.
func (n *Network) Decide(in *Input, out *Output) {
	n.bwe.Decide(in, out)
	n.own = append(n.own[:0], out.Targets...)
	bweProbe, bweReason, bweLimited := out.Probe, out.Reason, out.Limited
	pl := newPlan(in.Tracks)
	out.Probe, out.Reason, out.Limited = 0, "", false
	bweBinds := false // some track's layer is limited by the estimate, not the controller
	changed := false
	for i := range in.Tracks {
		t := &in.Tracks[i]
		target := n.own[i]
		if t.NetKnown && !t.Paused {
			net := netLayer(pl.ladders[i], t.NetLayers)
			if !n.hybrid || t.Enforced || net.Less(target) {
				target = net
			} else if target.Less(net) {
				bweBinds = true
			}
		} else {
			bweBinds = true
		}
		out.Targets[i] = target
		if target != t.Target {
			changed = true
		}
	}
	if bweBinds {
		// Only the estimate stands in the way: let bwe probe for headroom as it would alone.
		out.Probe, out.Limited = bweProbe, bweLimited
	}
	out.Usage = 0
	for i, l := range out.Targets {
		out.Usage += in.Tracks[i].Rates.of(l)
	}
	if changed {
		out.Reason = n.reason(in, out, bweReason)
	}
}

// netLayer is the rung a controller decision of k layers allows on a ladder (its base at least).
func netLayer(l []rung, k int) Layer {
	if len(l) == 0 {
		return NoLayer
	}
	return l[max(0, min(k, len(l))-1)].layer
}

func (n *Network) reason(in *Input, out *Output, bweReason string) string {
	for i := range in.Tracks {
		t := &in.Tracks[i]
		if out.Targets[i] == t.Target {
			continue
		}
		switch {
		case !t.NetKnown:
			return "no controller decision: bwe: " + bweReason
		case out.Targets[i] == n.own[i] && n.hybrid && !t.Enforced:
			return "estimate below the controller's decision: bwe: " + bweReason
		default:
			return fmt.Sprintf("controller allows %d layers", t.NetLayers)
		}
	}
	return ""
}
