package videoroom

import (
	"slices"
	"strings"
)

// NetctlView is the admin dashboard's view of the network controller: what the bridge already
// holds (its decisions and registrations), read under its lock without asking the controller, so
// a dashboard poll adds nothing to the controller's load. nil when no controller is configured.
func (p *Plugin) NetctlView() any {
	b := p.net
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	type decision struct {
		Subscription string `json:"subscription"`
		Layers       int    `json:"layers"`
		Enforced     bool   `json:"enforced"`
	}
	decisions := make([]decision, 0, len(b.decisions))
	for id, d := range b.decisions {
		decisions = append(decisions, decision{Subscription: id, Layers: d.layers, Enforced: d.enforced})
	}
	slices.SortFunc(decisions, func(a, b decision) int { return strings.Compare(a.Subscription, b.Subscription) })
	return map[string]any{
		"url":           b.cfg.URL,
		"node":          b.cfg.Node,
		"enforcement":   b.cfg.Enforcement,
		"connected":     b.watchUp && !b.down,
		"fallbacks":     b.fallbacks.Load(),
		"streams":       len(b.streams),
		"subscriptions": len(b.subs),
		"decisions":     decisions[:min(len(decisions), maxViewDecisions)],
	}
}

// maxViewDecisions bounds the decisions a dashboard snapshot lists.
const maxViewDecisions = 200
