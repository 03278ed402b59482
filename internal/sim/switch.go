package sim

import (
	"fmt"
	"time"

	"github.com/strata-rtc/strata/internal/netctl"
)

// Switch is an enforcement point of the network controller, like seed 000's SDN switches next to
// the SFU: it drops, per subscription (stream) and layer, what the controller's rules for its
// node do not allow. The simulated SFU consults it at its egress, before the receiver path. With a
// media reservation it also polices, on the links leaving its node (Police), the traffic that is
// not the SFU's media to the rate of the controller's meter for that link, as an OpenFlow meter
// with a drop band does.
type Switch struct {
	// Node is the topology node whose rules apply.
	Node     string
	rules    *netctl.RuleTable
	policers []*Policer
}

// NewSwitch returns a switch for node applying rules (the controller's Rules()).
func NewSwitch(node string, rules *netctl.RuleTable) *Switch {
	return &Switch{Node: node, rules: rules}
}

// Drops reports whether the switch drops a layer (0 = base) of a subscription.
func (sw *Switch) Drops(subscription string, layer int) bool {
	return sw.rules.Drops(sw.Node, subscription, layer)
}

// Police puts the switch in front of a link leaving its node: from then on, packets that are not
// managed media enter the link only as the controller's meter for it allows.
func (sw *Switch) Police(l *Link) (*Policer, error) {
	if l.cfg.From != sw.Node {
		return nil, fmt.Errorf("switch %s: link %s leaves %s, not this node", sw.Node, l.cfg.Name, l.cfg.From)
	}
	p := &Policer{sw: sw, link: l.cfg.Name}
	l.SetGate(p)
	sw.policers = append(sw.policers, p)
	return p, nil
}

// Policers returns the switch's policers in the order Police made them.
func (sw *Switch) Policers() []*Policer { return sw.policers }

// Policer is a token bucket in front of one link: the rate and bucket are the meter the controller
// gives the switch's node for the link; without a meter everything passes.
type Policer struct {
	sw     *Switch
	link   string
	on     bool
	tokens float64 // bits
	last   time.Duration
	// Dropped and DroppedBytes count the packets the meter dropped.
	Dropped, DroppedBytes int64
}

// Link is the name of the policed link.
func (p *Policer) Link() string { return p.link }

// Pass implements Gate: managed media always passes; other packets take their size from the
// bucket, or are dropped when it holds less.
func (p *Policer) Pass(pkt *Packet, now time.Duration) bool {
	if pkt.Managed {
		return true
	}
	m, ok := p.sw.rules.Meter(p.sw.Node, p.link)
	if !ok {
		p.on = false
		return true
	}
	burst := float64(m.BurstBits)
	if !p.on {
		p.on, p.tokens = true, burst // a new meter starts with a full bucket
	} else if dt := now - p.last; dt > 0 {
		p.tokens = min(burst, p.tokens+float64(m.RateBps)*dt.Seconds())
	}
	p.last = max(p.last, now)
	bits := float64(pkt.Size * 8)
	if p.tokens >= bits {
		p.tokens -= bits
		return true
	}
	p.Dropped++
	p.DroppedBytes += int64(pkt.Size)
	return false
}
