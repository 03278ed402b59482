package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-rtc/strata/internal/cluster"
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
