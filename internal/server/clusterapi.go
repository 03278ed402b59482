package server

import "github.com/strata-rtc/strata/internal/cluster"

// clusterSlot is the slot new session ids carry (0: no cluster, or no slot claimed yet).
func (s *Server) clusterSlot() int {
	if s.node == nil {
		return 0
	}
	return s.node.Self().Slot
}

// clusterAccepting says whether this node takes new sessions (always, without a cluster).
func (s *Server) clusterAccepting() (bool, string) {
	if s.node == nil {
		return true, ""
	}
	return s.node.Accepting()
}

// clusterProxy is what the transports forward by (nil: one node, nothing forwarded).
func (s *Server) clusterProxy() cluster.Proxy {
	if s.node == nil {
		return nil
	}
	return s.node
}
