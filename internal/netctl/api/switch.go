package api

import "time"

// Switch states (Switch.State).
const (
	// SwitchPending: the enforcer has not talked to the switch yet.
	SwitchPending = "pending"
	// SwitchOK: the switch holds the enforcer's flows for its current rule set.
	SwitchOK = "ok"
	// SwitchUnreachable: the switch's management socket did not answer (Error says why).
	SwitchUnreachable = "unreachable"
	// SwitchRefused: the switch answered but rejected the flows (Error holds its OpenFlow error).
	SwitchRefused = "refused"
)

// Switch is an enforcement switch as GET /v1/switches shows it: an OpenFlow switch on an
// enforcement node that netctl programs with the node's drop rules.
type Switch struct {
	Node string `json:"node"`
	// Target is the switch's OpenFlow management socket, e.g. "unix:/run/sw/br0.mgmt".
	Target string `json:"target"`
	Bridge string `json:"bridge,omitempty"`
	State  string `json:"state"`
	// Error is why the last install or check failed (empty when State is ok).
	Error string `json:"error,omitempty"`
	// RulesVersion counts the rule sets the controller gave this switch; InstalledVersion is the
	// one it holds (equal when it is up to date), installed at InstalledAt.
	RulesVersion     uint64    `json:"rules_version"`
	InstalledVersion uint64    `json:"installed_version"`
	InstalledAt      time.Time `json:"installed_at,omitzero"`
	// Rules is how many rules the switch enforces; Unenforceable lists the subscriptions whose
	// rules it cannot (no flow, unmarked layers, or a flow and mark another rule already uses).
	Rules         int      `json:"rules"`
	Unenforceable []string `json:"unenforceable,omitempty"`
	// Resyncs counts how often a rule set the switch already had was installed again: the check
	// found the switch's flows differed (a restarted switch, flows deleted by hand), or the switch
	// answered again after being unreachable. CheckedAt is the last check.
	Resyncs   uint64    `json:"resyncs"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Flows are the rules' flows with the counters of the last check.
	Flows []SwitchFlow `json:"flows"`
}

// SwitchFlow is one flow the controller installed: a layer (by its mark) of a subscription,
// passed or dropped, and what the switch counted on it.
type SwitchFlow struct {
	Subscription string `json:"subscription"`
	DSCP         int    `json:"dscp"`
	// Action is "pass" or "drop".
	Action  string `json:"action"`
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}
