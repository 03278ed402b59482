package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/clusterrig"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// lossPercent is the loss the lossy link between two nodes puts on each way (the 5 %).
const lossPercent = 5

// lossyLink makes the link between node1 (lossy's publisher's) and node3 (sub's) lose 5 % of its
// UDP each way for a few seconds. Node3 asks node1 again for what the link lost and node1 answers
// from its Receiver's cache, so the subscriber, whose own link is clean, loses no more of lossy's
// streams than of clean's, which come from node2 over a clean link: under 1 % where the link
// loses 5 %. Without the retransmissions the loss would reach the subscriber whole.
func lossyLink(t *testing.T, c *clusterrig.Cluster, sub *client.Subscriber, lossy, clean uint64) {
	loss, err := c.LoseBetween(0, 2, lossPercent)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := loss.Remove(); err != nil {
			t.Error(err)
		}
	}()
	origin0, edge0 := relayStats(t, c.Nodes[0]), relayStats(t, c.Nodes[2])
	before := streamCounters(sub)
	time.Sleep(8 * time.Second)
	after := streamCounters(sub)
	origin1, edge1 := relayStats(t, c.Nodes[0]), relayStats(t, c.Nodes[2])
	counts, err := loss.Counts()
	if err != nil {
		t.Fatal(err)
	}
	dropped := float64(counts.Dropped) / float64(max(counts.Arrived, 1))
	t.Logf("the link node1–node3 dropped %d of %d UDP packets (%.1f %%); node3 asked again for %d, node1 resent %d",
		counts.Dropped, counts.Arrived, 100*dropped, edge1.NACKsSent-edge0.NACKsSent, origin1.Retransmitted-origin0.Retransmitted)
	if counts.Arrived < 500 || dropped < 0.02 || dropped > 0.1 {
		t.Fatalf("the lossy link dropped %d of %d packets, want about %d %% of hundreds", counts.Dropped, counts.Arrived, lossPercent)
	}
	if origin1.Retransmitted == origin0.Retransmitted {
		t.Errorf("node1 resent nothing from its cache while the link to node3 lost %d packets", counts.Dropped)
	}
	for _, st := range sub.Streams() {
		b, a := before[st.Mid], after[st.Mid]
		expected, lost := a.Expected-b.Expected, a.Lost-b.Lost
		ratio := float64(lost) / float64(max(expected, 1))
		from := "node2 (clean link)"
		if st.Feed == lossy {
			from = "node1 (lossy link)"
		} else if st.Feed != clean {
			continue
		}
		t.Logf("%s from %s: %d of %d packets lost at the subscriber (%.2f %%)", st.Kind, from, lost, expected, 100*ratio)
		if expected < 50 {
			t.Errorf("%s from %s: %d packets expected in 8 s, want a live stream", st.Kind, from, expected)
		}
		if ratio > 0.01 {
			t.Errorf("%s from %s: %.2f %% lost at the subscriber with %d %% lost on the link between nodes, want under 1 %%",
				st.Kind, from, 100*ratio, lossPercent)
		}
	}
}

// streamCounters are the running totals of every stream of sub, by mid.
func streamCounters(sub *client.Subscriber) map[string]rtpstats.Counters {
	out := map[string]rtpstats.Counters{}
	for _, st := range sub.Streams() {
		out[st.Mid] = st.Counters()
	}
	return out
}

// relayStats is the relay part of node's admin API `cluster` reply.
func relayStats(t *testing.T, node *clusterrig.Node) relay.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reply struct {
		Cluster struct {
			Relay *relay.Stats `json:"relay"`
		} `json:"cluster"`
	}
	if err := node.AdminRequest(ctx, map[string]any{"janus": "cluster"}, &reply); err != nil || reply.Cluster.Relay == nil {
		t.Fatalf("%s: admin cluster: no relay stats (%v)", node.ID, err)
	}
	return *reply.Cluster.Relay
}
