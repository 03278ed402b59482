package netctl

import (
	"slices"
	"sync"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// Enforcer is an enforcement point, like the SDN switches of seed 000: it drops the layers the
// controller does not allow. ApplyRules replaces the complete rule set of a node (an empty set
// means forward everything); the controller calls it from Update whenever a node's rules change,
// so implementations must not call back into the controller.
type Enforcer interface {
	ApplyRules(node string, rules []api.Rule)
}

// RuleTable is the in-process Enforcer: it keeps every node's rules and answers a switch's
// per-packet question (does this layer pass?) with map lookups under a read lock, allocating
// nothing. The simulator's switch nodes call Drops; GET /v1/rules serves Rules.
type RuleTable struct {
	mu      sync.RWMutex
	version uint64
	nodes   map[string]*nodeRules
}

type nodeRules struct {
	version uint64
	rules   []api.Rule
	bySub   map[string]int
	meters  []api.Meter
}

// NewRuleTable returns an empty table.
func NewRuleTable() *RuleTable { return &RuleTable{nodes: map[string]*nodeRules{}} }

// ApplyRules implements Enforcer.
func (t *RuleTable) ApplyRules(node string, rules []api.Rule) {
	nr := &nodeRules{rules: slices.Clone(rules), bySub: make(map[string]int, len(rules))}
	for i, r := range nr.rules {
		nr.bySub[r.Subscription] = i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	nr.version = t.version
	if old, ok := t.nodes[node]; ok {
		nr.meters = old.meters
	}
	t.nodes[node] = nr
}

// ApplyMeters implements MeterEnforcer: it replaces a node's meters and bumps the version.
func (t *RuleTable) ApplyMeters(node string, meters []api.Meter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	nr, ok := t.nodes[node]
	if !ok {
		nr = &nodeRules{rules: []api.Rule{}, bySub: map[string]int{}}
	} else {
		c := *nr // readers may hold the old set: copy, never change it in place
		nr = &c
	}
	nr.version, nr.meters = t.version, slices.Clone(meters)
	t.nodes[node] = nr
}

// Meter returns the meter node applies to the non-media traffic entering a link; ok is false when
// it polices nothing there. Allocation-free (the simulator's switch asks per packet).
func (t *RuleTable) Meter(node, link string) (m api.Meter, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	nr, ok := t.nodes[node]
	if !ok {
		return api.Meter{}, false
	}
	for _, m := range nr.meters {
		if m.Link == link {
			return m, true
		}
	}
	return api.Meter{}, false
}

// Rules returns a node's rule set and its version (0 when the node never had rules). Versions
// grow with every change, so a poller can tell whether anything changed.
func (t *RuleTable) Rules(node string) api.Rules {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := api.Rules{Node: node, Rules: []api.Rule{}}
	if nr, ok := t.nodes[node]; ok {
		out.Version, out.Rules, out.Meters = nr.version, slices.Clone(nr.rules), slices.Clone(nr.meters)
	}
	return out
}

// Allowed returns how many layers of a subscription node forwards; ok is false when node has no
// rule for it (then it forwards everything).
func (t *RuleTable) Allowed(node, subscription string) (layers int, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	nr, ok := t.nodes[node]
	if !ok {
		return 0, false
	}
	i, ok := nr.bySub[subscription]
	if !ok {
		return 0, false
	}
	return nr.rules[i].Allow, true
}

// Drops reports whether node drops a layer (0 = base) of a subscription.
func (t *RuleTable) Drops(node, subscription string, layer int) bool {
	allow, ok := t.Allowed(node, subscription)
	return ok && layer >= allow
}
