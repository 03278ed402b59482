package server

import "github.com/strata-rtc/strata/internal/cluster"

// clusterNode is what the Janus API needs of this node's place in a cluster (*cluster.Node): its
// record (the slot that session ids carry), which node holds a session, and whether this node takes
// new sessions. The cluster wiring sets Server.cluster before Start; nil is one node.
type clusterNode interface {
	cluster.Proxy
	Self() cluster.NodeRecord
}

// clusterSlot is the slot new session ids carry (0: no cluster, or no slot claimed yet).
func (s *Server) clusterSlot() int {
	if s.cluster == nil {
		return 0
	}
	return s.cluster.Self().Slot
}

// clusterAccepting says whether this node takes new sessions (always, without a cluster).
func (s *Server) clusterAccepting() (bool, string) {
	if s.cluster == nil {
		return true, ""
	}
	return s.cluster.Accepting()
}

// clusterProxy is what the transports forward by (nil: one node, nothing forwarded).
func (s *Server) clusterProxy() cluster.Proxy {
	if s.cluster == nil {
		return nil
	}
	return s.cluster
}
