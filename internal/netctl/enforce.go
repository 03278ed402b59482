package netctl

import (
	"net/http"
	"net/netip"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// Switch enforcement: a subscription's rule carries its flow (the 5-tuple the SFU sends on) and
// the DSCP marks of the layers it passes and drops, so that a switch can match the packets. A
// switch's enforcer reports what it has installed with SetEnforced; a decision is Enforced while
// the switch on its path holds exactly the decision's current rule.

// checkFlow validates a subscription's flow: UDP, two ip:port addresses of the same family,
// without zones, neither unspecified nor port 0.
func checkFlow(f *api.Flow) error {
	if f == nil {
		return nil
	}
	if f.Proto != "udp" {
		return errorf(http.StatusBadRequest, api.CodeBadRequest, "flow.proto: %q is not supported (want \"udp\")", f.Proto)
	}
	src, err := flowAddr("src", f.Src)
	if err != nil {
		return err
	}
	dst, err := flowAddr("dst", f.Dst)
	if err != nil {
		return err
	}
	if src.Addr().Is4() != dst.Addr().Is4() {
		return errorf(http.StatusBadRequest, api.CodeBadRequest, "flow: src %s and dst %s are not of the same address family", f.Src, f.Dst)
	}
	return nil
}

func flowAddr(field, s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	switch {
	case err != nil:
		return ap, errorf(http.StatusBadRequest, api.CodeBadRequest, "flow.%s: %q is not ip:port (e.g. 10.0.0.1:5000 or [fd00::1]:5000)", field, s)
	case ap.Addr().Zone() != "":
		return ap, errorf(http.StatusBadRequest, api.CodeBadRequest, "flow.%s: %q has a zone, which a switch cannot match", field, s)
	case ap.Addr().IsUnspecified() || ap.Port() == 0:
		return ap, errorf(http.StatusBadRequest, api.CodeBadRequest, "flow.%s: %q is not a concrete address and port", field, s)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// checkMarks validates the layers' DSCP marks: 0 (unmarked) to 63, and no mark on two layers (a
// switch could not tell them apart).
func checkMarks(layers []api.Layer) error {
	var seen [api.MaxDSCP + 1]int
	for i, l := range layers {
		if l.DSCP < 0 || l.DSCP > api.MaxDSCP {
			return errorf(http.StatusBadRequest, api.CodeBadRequest, "layers[%d].dscp: %d is not a DiffServ code point (0 to %d)", i, l.DSCP, api.MaxDSCP)
		}
		if l.DSCP == 0 {
			continue
		}
		if j := seen[l.DSCP]; j > 0 {
			return errorf(http.StatusBadRequest, api.CodeBadRequest, "layers[%d].dscp: %d already marks layers[%d]", i, l.DSCP, j-1)
		}
		seen[l.DSCP] = i + 1
	}
	return nil
}

func cloneFlow(f *api.Flow) *api.Flow {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

func flowEqual(a, b *api.Flow) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// addMarks copies the subscription's flow and its stream's layer marks into its rule: the marks
// of layers below Allow to PassDSCP, the others to DropDSCP. Without a flow there is nothing a
// switch could match, so the marks stay out too.
func addMarks(r *api.Rule, sub *subscription) {
	if sub.Flow == nil {
		return
	}
	r.Flow = cloneFlow(sub.Flow)
	for k, l := range sub.stream.Layers {
		switch {
		case l.DSCP == 0:
		case k < r.Allow:
			r.PassDSCP = append(r.PassDSCP, l.DSCP)
		default:
			r.DropDSCP = append(r.DropDSCP, l.DSCP)
		}
	}
}

// enforced reports whether the switch on the subscription's path holds its current rule (c.mu
// held).
func (c *Controller) enforced(sub *subscription) bool {
	if !sub.hasRule {
		return false
	}
	got, ok := c.installed[sub.rule.Node][sub.ID]
	return ok && ruleEqual(got, sub.rule)
}

// SetEnforced is how a switch's enforcer acknowledges: the switch of node now holds installed
// (the rules it could enforce, out of the last set it was given), or, with err, nothing reliable
// (unreachable, or it refused the flows). Decisions whose Enforced flag changes get a new sequence
// number and a decision event. Enforcers call it from their own goroutine, never from inside
// ApplyRules (which runs under Update).
func (c *Controller) SetEnforced(node string, installed []api.Rule, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.installed, node)
	} else {
		m := make(map[string]api.Rule, len(installed))
		for _, r := range installed {
			m[r.Subscription] = r
		}
		c.installed[node] = m
	}
	for _, sub := range c.order {
		d, ok := c.published[sub.ID]
		if !ok {
			continue // not decided yet: the next Update publishes it with the flag
		}
		if e := c.enforced(sub); e != d.Enforced {
			c.seq++
			d.Enforced, d.Seq = e, c.seq
			c.published[sub.ID] = d
			c.notify(Event{Type: api.EventDecision, Decision: d})
		}
	}
}
