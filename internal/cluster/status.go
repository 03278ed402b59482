package cluster

import (
	"context"
)

// Status is the cluster as this node sees it, for the admin API.
type Status struct {
	Self      NodeRecord   `json:"self"`
	Nodes     []NodeRecord `json:"nodes"`
	Connected bool         `json:"connected"`
	Accepting bool         `json:"accepting"`
	// Reason says why the node refuses sessions when Accepting is false.
	Reason     string `json:"reason,omitempty"`
	LeasesHeld int    `json:"leases_held"`
	TopicGaps  int64  `json:"topic_gaps"`
	Malformed  int64  `json:"malformed_messages"`
}

// Status returns the cluster as this node sees it.
func (n *Node) Status() Status {
	ok, why := n.Accepting()
	st := n.Stats()
	return Status{Self: n.Self(), Nodes: n.Nodes(), Connected: st.Connected, Accepting: ok, Reason: why,
		LeasesHeld: st.LeasesHeld, TopicGaps: st.TopicGaps, Malformed: st.Malformed}
}

// SetAddresses changes the URLs this node advertises (the server knows its listeners' bound ports
// only once they listen, after the node joined) and writes the record at once.
func (n *Node) SetAddresses(api, ws, internal string) error {
	n.mu.Lock()
	n.self.API, n.self.WS, n.self.Internal = api, ws, internal
	rec := n.self
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.NodeTTL)
	defer cancel()
	return n.eng.PutNode(ctx, rec, n.cfg.NodeTTL)
}
