package server

import (
	"fmt"
	"log/slog"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// startRelay builds the media relay between nodes (cluster.relay) on the node's node-to-node
// requests, and has it drop the links of nodes the membership says are gone.
func startRelay(cfg *config.Config, node *cluster.Node, log *slog.Logger) (*relay.Relay, func(), error) {
	rc, err := relay.ConfigFrom(cfg.Cluster.Relay, node.Self().ID, log.With("component", "relay"))
	if err != nil {
		return nil, nil, fmt.Errorf("cluster relay: %w", err)
	}
	r, err := relay.New(rc, node)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster relay: %w", err)
	}
	unwatch := node.Watch(func(ev cluster.NodeEvent) {
		if ev.Kind == cluster.NodeGone {
			r.PeerGone(ev.Node.ID)
		}
	})
	return r, func() { unwatch(); r.Close() }, nil
}

// videoroomCluster is the videoroom's part of the cluster: none without one (a nil View is one
// node; a nil *relay.Relay must not become a non-nil interface).
func (s *Server) videoroomCluster() []videoroom.Option {
	if s.view == nil {
		return nil
	}
	var r videoroom.Relay
	if s.relay != nil {
		r = s.relay
	}
	return []videoroom.Option{videoroom.WithCluster(s.view, r)}
}
