package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/load/client"
)

// lapse is the bound on how long a dead node's participants may stay in a room elsewhere.
const lapse = 5 * time.Second

// TestCluster runs one videoroom over three strata nodes and a real redis-server, each node in its
// own network namespace: Pion publishers on nodes 1 and 2 and a subscriber on node 3 who receives
// both feeds, relayed between the nodes; an observer on every node sees the same publishers. Then,
// in order, on the same cluster: 5 % loss between two nodes (the subscriber loses under 1 %), a
// Redis restart (media goes on, the room stays whole), the kill -9 of a publisher's node (its feed
// is unpublished everywhere within 5 s, the others go on) and of the room's owner (a new owner, no
// duplicate feed ids, joins go on), and a drain.
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
	// The media crossed the relay: node1 sent, node3 received, and the admin API says so.
	if sent := relayPackets(t, c.Nodes[0], "sent"); sent == 0 {
		t.Error("node1's strata_cluster_relay_packets_total{direction=sent} is 0 with its feed watched on node3")
	}
	if got := relayPackets(t, c.Nodes[2], "received"); got == 0 {
		t.Error("node3's strata_cluster_relay_packets_total{direction=received} is 0 while it relays two feeds")
	}
	for _, n := range c.Nodes {
		got, err := listParticipants(ctx, n)
		if err != nil || !sameSet(got, feeds) {
			t.Errorf("%s lists publishers %v (%v), want %v", n.ID, got, err, feeds)
		}
	}

	// The admin API shows the cluster: every node lists the three, and the room's owner counts the
	// rooms it owns in its load (written with its next heartbeat).
	owner := leaseHolder(t, c, "videoroom/1234")
	waitFor(t, 3*time.Second, func() bool {
		st := clusterStatus(t, c.Nodes[2])
		for _, n := range st.Nodes {
			if n.ID == owner.Holder {
				return len(st.Nodes) == 3 && n.Load.Rooms >= 1
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("the owner %s does not count its rooms: %+v", owner.Holder, clusterStatus(t, c.Nodes[2]))
	})

	// A session created on node1 is used through node2 (requests) and node3 (its long-poll).
	t.Run("SessionProxied", func(t *testing.T) {
		var created struct {
			Data struct{ ID uint64 } `json:"data"`
		}
		postJSON(t, c.Nodes[0].API(), `{"janus":"create","transaction":"c"}`, &created)
		sid := created.Data.ID
		var attached struct {
			Janus string
			Data  struct{ ID uint64 } `json:"data"`
			Error struct {
				Code   int
				Reason string
			}
		}
		postJSON(t, fmt.Sprintf("%s/%d", c.Nodes[1].API(), sid), `{"janus":"attach","plugin":"janus.plugin.videoroom","transaction":"a"}`, &attached)
		if attached.Janus != "success" || attached.Data.ID == 0 {
			t.Fatalf("attach through node2 to node1's session %d: %+v", sid, attached)
		}
		var acked struct{ Janus string }
		postJSON(t, fmt.Sprintf("%s/%d/%d", c.Nodes[1].API(), sid, attached.Data.ID),
			fmt.Sprintf(`{"janus":"message","transaction":"j","body":{"request":"join","ptype":"publisher","room":%d,"display":"proxied"}}`, clusterRoom), &acked)
		if acked.Janus != "ack" {
			t.Fatalf("join through node2: %+v", acked)
		}
		type event struct {
			Janus       string
			Transaction string
			PluginData  struct {
				Data struct{ Videoroom string } `json:"data"`
			} `json:"plugindata"`
		}
		resp, err := http.Get(fmt.Sprintf("%s/%d?maxev=5", c.Nodes[2].API(), sid))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var events []event // maxev answers an array
		if err := json.Unmarshal(body, &events); err != nil {
			t.Fatalf("long-poll through node3: %s", body)
		}
		if len(events) == 0 || events[0].Transaction != "j" || events[0].PluginData.Data.Videoroom != "joined" {
			t.Errorf("long-poll through node3 of node1's session: %s, want the joined event of the join sent through node2", body)
		}
		postJSON(t, fmt.Sprintf("%s/%d", c.Nodes[2].API(), sid), `{"janus":"destroy","transaction":"d"}`, &acked)
		if acked.Janus != "success" {
			t.Errorf("destroy through node3: %+v", acked)
		}
	})

	// The unmodified janus.js against two nodes: a browser publishes on node1 over HTTP, another on
	// node2 over WebSocket subscribes to it and sees and hears it.
	t.Run("JanusJS", func(t *testing.T) {
		pages := servePage(t)
		pub, viewer := newBrowser(t), newBrowser(t)
		openJanusRoom(pub, pages.URL, c.Nodes[0].API())
		openJanusRoom(viewer, pages.URL, c.Nodes[1].WS())
		feed, err := eval[string](pub, fmt.Sprintf(`janusRoom.publish(%d, 'janus.js on node1').then(String)`, clusterRoom))
		if err != nil {
			t.Fatalf("janus.js publish on node1: %v", err)
		}
		if mid, err := eval[string](viewer, fmt.Sprintf(`janusRoom.subscribe(%d, %s)`, clusterRoom, feed)); err != nil || mid == "" {
			t.Fatalf("janus.js subscribe on node2 to node1's feed %s: mid %q, %v", feed, mid, err)
		}
		requireDecodedVideo(viewer, "window.janusRoom.pc", "node1's janus.js publisher on node2", 20*time.Second)
		requireAudioPackets(t, viewer, "window.janusRoom.pc", "node1's janus.js publisher's audio on node2", 100)
		for _, b := range []*browser{viewer, pub} {
			if _, err := eval[chromedp.Void](b, `janusRoom.destroy()`); err != nil {
				t.Fatalf("janus.destroy: %v", err)
			}
		}
	})

	t.Run("LossyLink", func(t *testing.T) { lossyLink(t, c, sub, p1.ID, p2.ID) })

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
		if err := c.RestartNode(ctx, 1); err != nil {
			t.Fatalf("node2 restarted: %v", err)
		}
	})

	t.Run("OwnerKilled", func(t *testing.T) {
		owner := leaseHolder(t, c, "videoroom/1234")
		o := c.NodeIndex(owner.Holder)
		if o < 0 {
			t.Fatalf("the room's owner %q is not a node of the cluster", owner.Holder)
		}
		killed := time.Now()
		c.Kill(o)
		var alive []int
		for i := range c.Nodes {
			if i != o {
				alive = append(alive, i)
			}
		}
		want := []uint64{}
		if o != 0 {
			want = append(want, p1.ID) // p1 lives on node1
		}
		for _, i := range alive {
			if i != 1 { // node2's observer died with the restart of node2
				observers[i].waitPublished(want, lapse)
			}
		}
		// A new owner at a higher epoch, and joins go on: a publisher on a surviving node is seen
		// by every surviving node, with a feed id of its own.
		next := waitLease(t, c, "videoroom/1234", owner.Epoch, 2*lapse)
		t.Logf("owner %s (epoch %d) killed; %s owns the room at epoch %d %v later", owner.Holder, owner.Epoch,
			next.Holder, next.Epoch, time.Since(killed).Round(time.Millisecond))
		p4, err := client.JoinPublisher(ctx, envs[alive[len(alive)-1]], 3)
		if err != nil {
			t.Fatalf("publisher after the owner's death: %v", err)
		}
		defer p4.Close(ctx)
		want = append(want, p4.ID)
		for _, i := range alive {
			got, err := listParticipants(ctx, c.Nodes[i])
			if err != nil {
				t.Fatal(err)
			}
			if !sameSet(got, want) {
				t.Errorf("%s lists publishers %v after the owner's death, want %v", c.Nodes[i].ID, got, want)
			}
		}
		if err := c.RestartNode(ctx, o); err != nil {
			t.Fatalf("%s restarted: %v", c.Nodes[o].ID, err)
		}
	})

	t.Run("Drain", func(t *testing.T) {
		// A call on node1 relayed from node2, then node1 drains: it refuses new sessions with the
		// status janus.js moves to its next server on, and the call goes on.
		pub, err := client.JoinPublisher(ctx, envs[1], 4)
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close(ctx)
		viewer, err := client.JoinSubscriber(ctx, envs[0], 1, nil, []uint64{pub.ID})
		if err != nil {
			t.Fatal(err)
		}
		defer viewer.Close(ctx)
		requireMedia(t, envs[0], viewer, 2, 15*time.Second)
		d := c.Nodes[0]
		var reply map[string]any
		if err := d.AdminRequest(ctx, map[string]any{"janus": "drain"}, &reply); err != nil || reply["janus"] != "success" {
			t.Fatalf("drain %s: %v %v", d.ID, reply, err)
		}
		if code := createStatus(t, d); code != http.StatusServiceUnavailable {
			t.Errorf("create on draining %s: HTTP %d, want 503", d.ID, code)
		}
		before := packets(viewer)
		time.Sleep(time.Second)
		if after := packets(viewer); sumOf(after) <= sumOf(before) {
			t.Error("a call on the draining node stopped")
		}
		if code := createStatus(t, c.Nodes[1]); code != http.StatusOK {
			t.Errorf("create on %s while %s drains: HTTP %d", c.Nodes[1].ID, d.ID, code)
		}
		// janus.js given the draining node first moves on to the next server, as it does when a
		// Janus server is down.
		pages := servePage(t)
		b := newBrowser(t)
		servers, _ := json.Marshal([]string{d.API(), c.Nodes[1].API()})
		openJanusRoom(b, pages.URL, string(servers))
		if _, err := eval[string](b, fmt.Sprintf(`janusRoom.publish(%d, 'janus.js after a drain').then(String)`, clusterRoom)); err != nil {
			t.Fatalf("janus.js with the draining node first: %v", err)
		}
		if got, err := eval[string](b, `janusRoom.janus.getServer()`); err != nil || got != c.Nodes[1].API() {
			t.Errorf("janus.js settled on %q (%v), want the next server %s", got, err, c.Nodes[1].API())
		}
		if _, err := eval[chromedp.Void](b, `janusRoom.destroy()`); err != nil {
			t.Fatalf("janus.destroy: %v", err)
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
