package sim

import "github.com/strata-rtc/strata/internal/netctl"

// Switch is an enforcement point of the network controller, like seed 000's SDN switches next to
// the SFU: it drops, per subscription (stream) and layer, what the controller's rules for its
// node do not allow. The simulated SFU consults it at its egress, before the receiver path.
type Switch struct {
	// Node is the topology node whose rules apply.
	Node  string
	rules *netctl.RuleTable
}

// NewSwitch returns a switch for node applying rules (the controller's Rules()).
func NewSwitch(node string, rules *netctl.RuleTable) *Switch {
	return &Switch{Node: node, rules: rules}
}

// Drops reports whether the switch drops a layer (0 = base) of a subscription.
func (sw *Switch) Drops(subscription string, layer int) bool {
	return sw.rules.Drops(sw.Node, subscription, layer)
}
