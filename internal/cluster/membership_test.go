package cluster_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

func TestMembership(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	var seen events
	cancel := n1.Watch(seen.add)
	defer cancel()
	n2 := startNode(t, srv.Addr(), "n2")
	n3 := startNode(t, srv.Addr(), "n3")

	waitFor(t, 2*time.Second, "n1 sees n2 and n3 up", func() bool {
		return seen.has(cluster.NodeUp, "n2") && seen.has(cluster.NodeUp, "n3")
	})
	nodes := n1.Nodes()
	if len(nodes) != 3 || nodes[0].ID != "n1" || nodes[1].ID != "n2" || nodes[2].ID != "n3" {
		t.Fatalf("nodes: %+v", nodes)
	}
	slots := map[int]bool{}
	for _, r := range nodes {
		if r.Slot < 1 || r.Slot > cluster.MaxSlot || slots[r.Slot] {
			t.Fatalf("slots not unique in [1, %d]: %+v", cluster.MaxSlot, nodes)
		}
		slots[r.Slot] = true
		if r.State != cluster.Serving {
			t.Fatalf("state: %+v", r)
		}
	}

	// A session id of n2's slot is located on n2; one of n1's own slot or of no slot is local.
	r2 := n2.Self()
	if r, ok := n1.Locate(cluster.WithSlot(12345, r2.Slot)); !ok || r.ID != "n2" || r.API != "http://n2/janus" {
		t.Fatalf("locate n2's session: %+v %v", r, ok)
	}
	if _, ok := n1.Locate(cluster.WithSlot(12345, n1.Self().Slot)); ok {
		t.Fatal("n1's own session located elsewhere")
	}
	if _, ok := n1.Locate(12345); ok {
		t.Fatal("a slotless session located elsewhere")
	}

	// Draining shows as a change of state.
	if err := n2.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, why := n2.Accepting(); ok || why == "" {
		t.Fatalf("draining node accepting: %v %q", ok, why)
	}
	waitFor(t, 2*time.Second, "n1 sees n2 draining", func() bool {
		r, ok := n1.Node("n2")
		return ok && r.State == cluster.Draining && seen.has(cluster.NodeChanged, "n2")
	})

	// n3 crashes (its heartbeat stops, nothing is deleted): gone once its record lapses.
	n3.Halt()
	crashed := time.Now()
	waitFor(t, 3*(nodeTTL+heartbeat), "n1 sees n3 gone", func() bool { return seen.has(cluster.NodeGone, "n3") })
	if d := time.Since(crashed); d > nodeTTL+heartbeat+time.Second {
		// A functional bound (node_ttl + heartbeat), with a second of slack for a loaded machine.
		t.Fatalf("n3 gone after %v, beyond node_ttl + heartbeat", d)
	}
	if _, ok := n1.Locate(cluster.WithSlot(1, n3.Self().Slot)); ok {
		t.Fatal("a gone node's session still located")
	}

	// n2 stops cleanly: gone at the next membership read.
	if err := n2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*heartbeat+nodeTTL/2, "n1 sees n2 gone", func() bool { return seen.has(cluster.NodeGone, "n2") })
	if got := len(n1.Nodes()); got != 1 {
		t.Fatalf("n1 alone: %d nodes", got)
	}
}

func TestOwnerFailover(t *testing.T) {
	srv := redistest.Start(t)
	nodes := []*cluster.Node{startNode(t, srv.Addr(), "n1"), startNode(t, srv.Addr(), "n2"), startNode(t, srv.Addr(), "n3")}
	owners := make([]cluster.Ownership, 3)
	owners[0] = nodes[0].Owner("room/1", true)
	waitFor(t, time.Second, "n1 owns the room", func() bool { _, mine := owners[0].Current(); return mine })
	first, _ := owners[0].Current()
	if first.Holder != "n1" || first.Epoch != 1 {
		t.Fatalf("first lease: %+v", first)
	}
	changes := make(chan cluster.Lease, 16)
	for i := 1; i < 3; i++ {
		owners[i] = nodes[i].Owner("room/1", true)
		owners[i].OnChange(func(l cluster.Lease, mine bool) {
			if mine {
				changes <- l
			}
		})
	}
	waitFor(t, time.Second, "n2 and n3 follow n1", func() bool {
		a, minea := owners[1].Current()
		b, mineb := owners[2].Current()
		return a == first && b == first && !minea && !mineb
	})
	if n := nodes[0].Stats().LeasesHeld; n != 1 {
		t.Fatalf("n1 holds %d leases", n)
	}

	// n1 crashes: another node takes the room at epoch + 1, and only one.
	nodes[0].Halt()
	var next cluster.Lease
	select {
	case next = <-changes:
	case <-time.After(leaseTTL + 10*heartbeat):
		t.Fatal("nobody took the room over")
	}
	if next.Epoch != first.Epoch+1 || next.Holder == "n1" {
		t.Fatalf("takeover: %+v", next)
	}
	waitFor(t, time.Second, "both survivors agree", func() bool {
		a, minea := owners[1].Current()
		b, mineb := owners[2].Current()
		return a == next && b == next && minea != mineb
	})
	select {
	case l := <-changes:
		t.Fatalf("second owner: %+v", l)
	case <-time.After(3 * heartbeat):
	}

	// The owner drains: it releases the room and the other survivor takes it, at epoch + 1 again.
	var drainer, other int = 1, 2
	if next.Holder == "n3" {
		drainer, other = 2, 1
	}
	if err := nodes[drainer].Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, leaseTTL+10*heartbeat, "the other survivor owns the room", func() bool {
		l, mine := owners[other].Current()
		return mine && l.Epoch == next.Epoch+1
	})
	if _, mine := owners[drainer].Current(); mine {
		t.Fatal("the draining node still owns the room")
	}
}

// A restarted Redis forgot every record; the nodes write theirs again within a heartbeat, and
// none is taken for gone meanwhile (its sessions and feeds are fine).
func TestRedisRestartKeepsMembers(t *testing.T) {
	srv := redistest.Start(t)
	// n1 heartbeats slowly, so that n2 reads the new Redis before n1 wrote its record there.
	n1 := startNode(t, srv.Addr(), "n1", func(c *cluster.Config) {
		c.Heartbeat, c.NodeTTL, c.LeaseTTL = 300*time.Millisecond, 1500*time.Millisecond, 1500*time.Millisecond
	})
	n2 := startNode(t, srv.Addr(), "n2", func(c *cluster.Config) { c.NodeTTL = time.Second })
	waitFor(t, time.Second, "n2 sees n1", func() bool { _, ok := n2.Node("n1"); return ok })
	var seen events
	defer n2.Watch(seen.add)()
	srv.Restart()
	check := rawPublisher(t, srv.Addr())
	waitFor(t, 5*time.Second, "both records in the new Redis", func() bool {
		recs, _ := check.Nodes(context.Background())
		return len(recs) == 2
	})
	time.Sleep(3 * heartbeat)
	if seen.has(cluster.NodeGone, "n1") {
		t.Fatal("n1 taken for gone after a Redis restart")
	}
	if r, ok := n2.Node("n1"); !ok || r.Slot != n1.Self().Slot {
		t.Fatalf("n2 lost n1: %+v %v", r, ok)
	}
}

// Two processes configured with one node id: the node says so (and keeps running).
func TestDuplicateNodeID(t *testing.T) {
	srv := redistest.Start(t)
	var logs syncbuf.Buffer
	eng := rawPublisher(t, srv.Addr())
	n, err := cluster.New(cluster.Config{NodeID: "n1", Secret: secret, Heartbeat: heartbeat, NodeTTL: nodeTTL,
		LeaseTTL: leaseTTL}, eng, cluster.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())
	other := n.Self()
	other.Started = other.Started.Add(time.Hour)
	if err := eng.PutNode(context.Background(), other, time.Minute); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the duplicate reported", func() bool {
		return strings.Contains(logs.String(), "another node runs with this node id")
	})
}
