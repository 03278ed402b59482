package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// Cluster is what the metrics read from the cluster node (*cluster.Node).
type Cluster interface {
	Stats() cluster.Stats
}

// The cluster, as this node sees it. No labels: a node id or room name would grow without bound.
var (
	clusterNodesDesc     = desc("cluster_nodes", "Live cluster nodes, this one included.")
	clusterConnectedDesc = desc("cluster_connected", "1 while the cluster engine (Redis) answers, 0 once this node is cut off from it.")
	clusterLeasesDesc    = desc("cluster_leases_held", "Leases (room ownerships) this node holds.")
	clusterGapsDesc      = desc("cluster_topic_gaps_total", "Lost events reported to topic subscribers (a sequence gap, a new epoch, a lost subscription).")
	clusterMalformedDesc = desc("cluster_malformed_messages_total", "Messages on the cluster's channels dropped as malformed.")
)

type clusterCollector struct{ c Cluster }

func (c clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, clusterNodesDesc, clusterConnectedDesc, clusterLeasesDesc, clusterGapsDesc, clusterMalformedDesc)
}

func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.c.Stats()
	connected := 0.0
	if st.Connected {
		connected = 1
	}
	ch <- gauge(clusterNodesDesc, float64(st.Nodes))
	ch <- gauge(clusterConnectedDesc, connected)
	ch <- gauge(clusterLeasesDesc, float64(st.LeasesHeld))
	ch <- counter(clusterGapsDesc, uint64(st.TopicGaps))
	ch <- counter(clusterMalformedDesc, uint64(st.Malformed))
}

// Relay is what the metrics read from the node's media relay (*relay.Relay).
type Relay interface {
	Stats() relay.Stats
}

// The media relay between this node and the others. Labels are directions, never peers.
var (
	relayLinksDesc     = desc("cluster_relay_links", "Links of the media relay to other nodes, by state.", "state")
	relayFeedsDesc     = desc("cluster_relay_feeds", "Feeds this node offers to other nodes (export) and receives from them (import).", "direction")
	relayPacketsDesc   = desc("cluster_relay_packets_total", "RTP packets sent to and received from other nodes, retransmissions included.", "direction")
	relayNACKsDesc     = desc("cluster_relay_nacks_total", "Packets this node asked other nodes for again (sent) and they asked of it (received).", "direction")
	relayRetransDesc   = desc("cluster_relay_retransmitted_total", "Packets this node sent again to other nodes from its cache.")
	relayKeyframesDesc = desc("cluster_relay_keyframe_requests_total", "Keyframe requests sent to origins and received from edges (before the origin's rate limit merged them).", "direction")
	relayDataDesc      = desc("cluster_relay_data_messages_total", "Data channel messages sent to and received from other nodes.", "direction")
	relayDataDropDesc  = desc("cluster_relay_data_dropped_total", "Data channel messages this node did not send to another node because the link's queue was full.")
)

type relayCollector struct{ r Relay }

func (c relayCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, relayLinksDesc, relayFeedsDesc, relayPacketsDesc, relayNACKsDesc, relayRetransDesc, relayKeyframesDesc,
		relayDataDesc, relayDataDropDesc)
}

func (c relayCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.r.Stats()
	links := map[string]int{}
	for _, l := range st.Links {
		links[l.State]++
	}
	for state, n := range links {
		ch <- gauge(relayLinksDesc, float64(n), state)
	}
	ch <- gauge(relayFeedsDesc, float64(st.Exports), "export")
	ch <- gauge(relayFeedsDesc, float64(st.Imports), "import")
	ch <- counter(relayPacketsDesc, st.PacketsSent, "sent")
	ch <- counter(relayPacketsDesc, st.PacketsReceived, "received")
	ch <- counter(relayNACKsDesc, st.NACKsSent, "sent")
	ch <- counter(relayNACKsDesc, st.NACKsReceived, "received")
	ch <- counter(relayRetransDesc, st.Retransmitted)
	ch <- counter(relayKeyframesDesc, st.KeyframeRequestsSent, "sent")
	ch <- counter(relayKeyframesDesc, st.KeyframeRequestsReceived, "received")
	ch <- counter(relayDataDesc, st.DataSent, "sent")
	ch <- counter(relayDataDesc, st.DataReceived, "received")
	ch <- counter(relayDataDropDesc, st.DataDropped)
}
