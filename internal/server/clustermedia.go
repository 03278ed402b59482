package server

import (
	"log/slog"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// clusterMedia starts the node's media relay (cluster.relay) and returns the videoroom's cluster
// option: rooms span the nodes of the view and feeds cross between nodes on the relay. stop closes
// the relay. Without a cluster it returns no option and a stop that does nothing.
func clusterMedia(cfg *config.Config, log *slog.Logger, node *cluster.Node) (opts []videoroom.Option, stop func(), err error) {
	if node == nil {
		return nil, func() {}, nil
	}
	lo, hi, err := cfg.Cluster.Relay.PortRange()
	if err != nil {
		return nil, nil, err
	}
	r, err := relay.New(relay.Config{NodeID: node.Self().ID, Address: cfg.Cluster.Relay.Address, PortMin: lo, PortMax: hi,
		Transport: cfg.Cluster.Relay.Transport, Log: log.With("component", "relay")}, node)
	if err != nil {
		return nil, nil, err
	}
	unwatch := node.Watch(func(ev cluster.NodeEvent) {
		if ev.Kind == cluster.NodeGone {
			r.PeerGone(ev.Node.ID)
		}
	})
	return []videoroom.Option{videoroom.WithCluster(node, r)}, func() { unwatch(); r.Close() }, nil
}
