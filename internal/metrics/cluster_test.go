package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/strata-rtc/strata/internal/cluster"
)

type fakeCluster struct{}

func (fakeCluster) Stats() cluster.Stats {
	return cluster.Stats{Nodes: 3, Connected: true, LeasesHeld: 2, TopicGaps: 5, Malformed: 1}
}

func TestClusterCollector(t *testing.T) {
	m := New()
	m.Register(Sources{Cluster: fakeCluster{}})
	want := `
# HELP strata_cluster_nodes Live cluster nodes, this one included.
# TYPE strata_cluster_nodes gauge
strata_cluster_nodes 3
# HELP strata_cluster_connected 1 while the cluster engine (Redis) answers, 0 once this node is cut off from it.
# TYPE strata_cluster_connected gauge
strata_cluster_connected 1
# HELP strata_cluster_leases_held Leases (room ownerships) this node holds.
# TYPE strata_cluster_leases_held gauge
strata_cluster_leases_held 2
# HELP strata_cluster_topic_gaps_total Lost events reported to topic subscribers (a sequence gap, a new epoch, a lost subscription).
# TYPE strata_cluster_topic_gaps_total counter
strata_cluster_topic_gaps_total 5
# HELP strata_cluster_malformed_messages_total Messages on the cluster's channels dropped as malformed.
# TYPE strata_cluster_malformed_messages_total counter
strata_cluster_malformed_messages_total 1
`
	names := []string{"strata_cluster_nodes", "strata_cluster_connected", "strata_cluster_leases_held",
		"strata_cluster_topic_gaps_total", "strata_cluster_malformed_messages_total"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(m.Registry()); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
	// Without a cluster, no cluster series.
	none := New()
	none.Register(Sources{})
	if n, _ := testutil.GatherAndCount(none.Registry(), "strata_cluster_nodes"); n != 0 {
		t.Errorf("%d cluster series without a cluster", n)
	}
}
