package cluster_test

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

// TestMembershipAcrossRedisRestart: Redis restarts empty; the nodes write their records again
// and nobody is declared gone (a gone node's participants and feeds would be dropped), while a
// node that really stops during the outage is gone once its record is still missing node_ttl later.
func TestMembershipAcrossRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	var seen events
	cancel := n1.Watch(seen.add)
	defer cancel()
	n2 := startNode(t, srv.Addr(), "n2")
	var seen2 events
	cancel2 := n2.Watch(seen2.add)
	defer cancel2()
	n3 := startNode(t, srv.Addr(), "n3")
	waitFor(t, 2*time.Second, "n1 sees n2 and n3 up", func() bool {
		return seen.has(cluster.NodeUp, "n2") && seen.has(cluster.NodeUp, "n3")
	})
	srv.Restart()
	n3.Halt()
	waitFor(t, 3*(nodeTTL+heartbeat), "n1 sees n3 gone", func() bool { return seen.has(cluster.NodeGone, "n3") })
	time.Sleep(2 * heartbeat)
	if seen.has(cluster.NodeGone, "n2") || seen2.has(cluster.NodeGone, "n1") {
		t.Fatal("a live node declared gone across the Redis restart")
	}
	if _, ok := n1.Node("n2"); !ok {
		t.Fatal("n2 not a member after the Redis restart")
	}
}
