// Package netctl is strata's network controller (strata netctl), after seed 000: the SFU forwards
// layers, and a controller that knows the topology and the live state of every link decides how
// many layers each SFU→receiver path can carry; enforcement points near the SFU drop the rest.
//
// The pieces, one concern each:
//
//   - topo: the topology (nodes, one-way links with capacity and delay) from YAML, and paths;
//   - linkstate: live link loads from pluggable sources (agent counters, an in-process feed for
//     the simulator), with a fall back to static capacities when reports go stale;
//   - alloc: the decision itself, pure code (time is an argument): seed 000's Algorithm 1, and
//     strata's joint max-min allocation at layer granularity with a burst margin and hysteresis;
//   - this package: the Controller (state, attribution of measured load to background traffic,
//     decisions, drop rules for Enforcers such as the in-process RuleTable), the HTTP Server
//     (northbound JSON API under /v1/, decisions as server-sent events, status page) and Main;
//   - agent: reads interface counters and reports them; client: the Go client the SFU uses.
//
// The Controller reads no clock either: the Server passes its uptime, the simulator its simulated
// time. docs/NETCTL.md describes the model, the algorithm and the API.
package netctl
