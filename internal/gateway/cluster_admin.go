package gateway

import (
	"context"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/janus"
)

// ClusterAdmin is the cluster as the admin API sees it: the server's cluster node (*cluster.Node).
type ClusterAdmin interface {
	Status() cluster.Status
	Drain(ctx context.Context) error
}

// WithClusterAdmin gives the admin API the cluster's verbs: `cluster` (this node, every live node
// and whether the engine answers) and `drain` (stop taking sessions, hand the owned rooms over).
// Without it (one node), `cluster` answers enabled: false and `drain` is an error.
func WithClusterAdmin(c ClusterAdmin) Option {
	return func(g *Gateway) { g.cluster = c }
}

// clusterVerb serves the admin API's cluster verbs (at the root, behind admin_secret).
func (g *Gateway) clusterVerb(ctx context.Context, r adminReq) janus.Message {
	switch r.Janus {
	case "cluster":
		if g.cluster == nil {
			return r.ok().With("cluster", map[string]any{"enabled": false})
		}
		st := g.cluster.Status()
		return r.ok().With("cluster", map[string]any{
			"enabled": true, "self": st.Self, "nodes": st.Nodes, "connected": st.Connected,
			"accepting": st.Accepting, "reason": st.Reason, "leases_held": st.LeasesHeld,
			"topic_gaps": st.TopicGaps, "malformed_messages": st.Malformed,
		})
	case "drain":
		if g.cluster == nil {
			return r.fail(janus.Errorf(janus.ErrUnknown, "Not a cluster node: nothing to drain"))
		}
		if err := g.cluster.Drain(ctx); err != nil {
			// The node drains anyway (its state changed at once); the error says what could not
			// be handed over yet (the engine unreachable, say).
			return r.fail(janus.Errorf(janus.ErrUnknown, "Drain: %v", err))
		}
		return r.ok().With("cluster", map[string]any{"state": string(cluster.Draining)})
	}
	return r.fail(janus.WrongPath(r.Verb))
}
