package videoroom_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/cluster/clustertest"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// startCluster runs n nodes over one real redis-server, without media between them.
func startCluster(t *testing.T, n int) []*testNode {
	t.Helper()
	return startClusterWith(t, n, false)
}

// startClusterWith runs n nodes over one real redis-server; withRelay relays media between them.
func startClusterWith(t *testing.T, n int, withRelay bool) []*testNode {
	t.Helper()
	rs := redistest.Start(t)
	prefix := fmt.Sprintf("vr%d", time.Now().UnixNano())
	var nodes []*testNode
	for i := 1; i <= n; i++ {
		nodes = append(nodes, startNode(t, rs.Addr(), prefix, fmt.Sprintf("node%d", i), withRelay))
	}
	// Every node sees the others before the test starts.
	deadline := time.Now().Add(5 * time.Second)
	for _, nd := range nodes {
		for len(nd.node.Nodes()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%s sees %d nodes", nd.id, len(nd.node.Nodes()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nodes
}

// TestClusterRoomSpansNodes: participants joined on three nodes appear on each as on one server
// (joined, publishers events, listparticipants), the room's events come in the same order
// everywhere, a feed id taken on one node is refused on another, and a participant's departure
// reaches the others.
func TestClusterRoomSpansNodes(t *testing.T) {
	nodes := startCluster(t, 3)
	const room = 1234
	o1, _ := joinObserver(t, nodes[0], room, "o1")
	o2, _ := joinObserver(t, nodes[1], room, "o2")
	o3, joined3 := joinObserver(t, nodes[2], room, "o3")
	if ps := joined3["publishers"].([]any); len(ps) != 0 {
		t.Fatalf("joined lists publishers %v before anyone published", ps)
	}
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{o1.id: false, o2.id: false, o3.id: false}, nodes...)

	// A publisher on node 1 and one on node 2: every node's observers hear of both.
	p1 := startPublisher(t, nodes[0].c, room, "pub1")
	p2 := startPublisher(t, nodes[1].c, room, "pub2")
	for _, o := range []*observer{o1, o2, o3} {
		o.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p1.id), fmt.Sprintf("publishers:%d", p2.id))
	}
	want := map[uint64]bool{o1.id: false, o2.id: false, o3.id: false, p1.id: true, p2.id: true}
	waitParticipants(t, 5*time.Second, room, want, nodes...)

	// A new participant on node 3 finds both in joined.
	late, joined := joinObserver(t, nodes[2], room, "late")
	var listed []uint64
	for _, p := range joined["publishers"].([]any) {
		listed = append(listed, uint64(p.(map[string]any)["id"].(float64)))
	}
	slices.Sort(listed)
	if wantIDs := sorted(p1.id, p2.id); !slices.Equal(listed, wantIDs) {
		t.Fatalf("joined on node 3 lists publishers %v, want %v", listed, wantIDs)
	}

	// No duplicate feed ids across nodes: node 2 refuses the id of node 1's publisher, and node 1
	// that of node 3's participant.
	_, _, err := request(t, attach(t, nodes[1].c), map[string]any{"request": "join", "ptype": "publisher", "room": room, "id": p1.id}, nil)
	wantCode(t, err, videoroom.ErrIDExists)
	_, _, err = request(t, attach(t, nodes[0].c), map[string]any{"request": "join", "ptype": "publisher", "room": room, "id": late.id}, nil)
	wantCode(t, err, videoroom.ErrIDExists)

	// node 1's publisher leaves: the others hear it unpublished and leaving.
	mustRequest(t, p1.h, map[string]any{"request": "leave"}, nil)
	for _, o := range []*observer{o2, o3, late} {
		o.waitSummary(5*time.Second, fmt.Sprintf("unpublished:%d", p1.id), fmt.Sprintf("leaving:%d", p1.id))
	}
	// The events about others came in the same order on every node.
	time.Sleep(300 * time.Millisecond)
	ref := without(o1.summary(), o2.id, o3.id)
	for _, o := range []*observer{o2, o3} {
		if got := without(o.summary(), o1.id, o2.id, o3.id); fmt.Sprint(got) != fmt.Sprint(without(ref, o1.id, o2.id, o3.id)) {
			t.Fatalf("observer on another node got %v, node 1's got %v", got, ref)
		}
	}
}

// TestClusterNodeGone: the node of a publisher dies; every other node unpublishes its feed and
// removes its participants within 5 s, and the room goes on.
func TestClusterNodeGone(t *testing.T) {
	nodes := startCluster(t, 3)
	const room = 1234
	o1, _ := joinObserver(t, nodes[0], room, "o1")
	o3, _ := joinObserver(t, nodes[2], room, "o3")
	p2 := startPublisher(t, nodes[1].c, room, "pub2")
	o1.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p2.id))
	o3.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p2.id))

	nodes[1].crash()
	died := time.Now()
	for _, o := range []*observer{o1, o3} {
		o.waitSummary(5*time.Second-time.Since(died), fmt.Sprintf("unpublished:%d", p2.id), fmt.Sprintf("leaving:%d", p2.id))
	}
	t.Logf("node 2's publisher unpublished everywhere %v after its death", time.Since(died))
	waitParticipants(t, time.Second, room, map[uint64]bool{o1.id: false, o3.id: false}, nodes[0], nodes[2])
	// The room goes on: a participant joins on node 3, node 1 hears of it.
	p3 := startPublisher(t, nodes[2].c, room, "pub3")
	o1.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p3.id))
}

// TestClusterOwnerGone: the room's owner dies; another node takes the room at a higher epoch,
// rebuilt from what the surviving nodes re-announce, and decides again (no duplicate ids).
func TestClusterOwnerGone(t *testing.T) {
	nodes := startCluster(t, 3)
	const room = 1234
	lease := roomOwner(t, 5*time.Second, room, nodes[0], 0)
	var owner *testNode
	var others []*testNode
	for _, n := range nodes {
		if n.id == lease.Holder {
			owner = n
		} else {
			others = append(others, n)
		}
	}
	if owner == nil {
		t.Fatalf("room owned by %q, not a node of the test", lease.Holder)
	}
	a, _ := joinObserver(t, others[0], room, "a")
	b, _ := joinObserver(t, others[1], room, "b")
	gone, _ := joinObserver(t, owner, room, "on-owner")
	pb := startPublisher(t, others[1].c, room, "pub-b")
	a.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", pb.id))

	owner.crash()
	died := time.Now()
	next := roomOwner(t, 5*time.Second, room, others[0], lease.Epoch)
	if next.Epoch <= lease.Epoch || next.Holder == owner.id {
		t.Fatalf("new owner %+v after %+v", next, lease)
	}
	t.Logf("owner %s at epoch %d replaced by %s at epoch %d after %v", lease.Holder, lease.Epoch, next.Holder, next.Epoch, time.Since(died))
	a.waitSummary(5*time.Second-time.Since(died), fmt.Sprintf("leaving:%d", gone.id))
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{a.id: false, b.id: false, pb.id: true}, others...)
	// The new owner refuses an id the room has, on either node, and admits a new one.
	for _, n := range others {
		_, _, err := request(t, attach(t, n.c), map[string]any{"request": "join", "ptype": "publisher", "room": room, "id": pb.id}, nil)
		wantCode(t, err, videoroom.ErrIDExists)
	}
	c, _ := joinObserver(t, others[0], room, "c")
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{a.id: false, b.id: false, c.id: false, pb.id: true}, others...)
}

// TestClusterRoomAdmin: a room created on one node exists on the others; kick and moderate
// requests sent to any node are decided by the owner and carried out by the participant's node;
// destroy ends the room everywhere.
func TestClusterRoomAdmin(t *testing.T) {
	nodes := startCluster(t, 2)
	h := attach(t, nodes[0].c)
	created, _ := mustRequest(t, h, map[string]any{"request": "create", "room": 77, "publishers": 2, "notify_joining": true, "secret": "s"}, nil)
	if created["videoroom"] != "created" {
		t.Fatalf("create: %v", created)
	}
	_, _, err := request(t, attach(t, nodes[1].c), map[string]any{"request": "create", "room": 77}, nil)
	wantCode(t, err, videoroom.ErrRoomExists)
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, _ := mustRequest(t, attach(t, nodes[1].c), map[string]any{"request": "exists", "room": 77}, nil)
		if d["exists"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("room 77 created on node 1 does not exist on node 2")
		}
		time.Sleep(50 * time.Millisecond)
	}
	o1, _ := joinObserver(t, nodes[0], 77, "o1")
	o2, _ := joinObserver(t, nodes[1], 77, "o2")
	o1.waitSummary(5*time.Second, fmt.Sprintf("joining:%d", o2.id))

	// The publisher limit (2) counts both nodes' publishers.
	startPublisher(t, nodes[0].c, 77, "p1")
	p2 := startPublisher(t, nodes[1].c, 77, "p2")
	o1.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p2.id))
	third := attach(t, nodes[0].c)
	mustRequest(t, third, map[string]any{"request": "join", "ptype": "publisher", "room": 77}, nil)
	_, _, err = request(t, third, map[string]any{"request": "configure"}, offerOnly(t))
	wantCode(t, err, videoroom.ErrPublishersFull)

	// Moderation of node 2's publisher sent to node 1: everyone hears of it, node 2 mutes it.
	mustRequest(t, attach(t, nodes[0].c), map[string]any{"request": "moderate", "room": 77, "secret": "s", "id": p2.id, "mid": "0", "mute": true}, nil)
	waitEventOf(t, o1, func(ev map[string]any) bool { return ev["moderation"] == "muted" && ev["id"] == float64(p2.id) })
	waitEventOf(t, o2, func(ev map[string]any) bool { return ev["moderation"] == "muted" && ev["id"] == float64(p2.id) })
	_, _, err = request(t, attach(t, nodes[1].c), map[string]any{"request": "moderate", "room": 77, "secret": "s", "id": p2.id, "mid": "7", "mute": true}, nil)
	wantCode(t, err, videoroom.ErrNoSuchFeed)

	// edit through node 2: node 1's list shows it.
	mustRequest(t, attach(t, nodes[1].c), map[string]any{"request": "edit", "room": 77, "secret": "s", "new_description": "edited on node 2"}, nil)
	deadline = time.Now().Add(5 * time.Second)
	for {
		l, _ := mustRequest(t, attach(t, nodes[0].c), map[string]any{"request": "list"}, nil)
		found := false
		for _, r := range l["list"].([]any) {
			if m := r.(map[string]any); m["room"] == float64(77) && m["description"] == "edited on node 2" {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1's list after an edit on node 2: %v", l)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A kick sent to node 1 of node 2's participant.
	mustRequest(t, attach(t, nodes[0].c), map[string]any{"request": "kick", "room": 77, "secret": "s", "id": o2.id}, nil)
	o1.waitSummary(5*time.Second, fmt.Sprintf("kicked:%d", o2.id), fmt.Sprintf("leaving:%d", o2.id))
	_, _, err = request(t, attach(t, nodes[1].c), map[string]any{"request": "kick", "room": 77, "secret": "wrong", "id": o1.id}, nil)
	wantCode(t, err, videoroom.ErrUnauthorized)

	// destroy through node 2 ends the room on node 1.
	mustRequest(t, attach(t, nodes[1].c), map[string]any{"request": "destroy", "room": 77, "secret": "s"}, nil)
	waitEventOf(t, o1, func(ev map[string]any) bool { return ev["videoroom"] == "destroyed" })
	for _, n := range nodes {
		d, _ := mustRequest(t, attach(t, n.c), map[string]any{"request": "exists", "room": 77}, nil)
		if d["exists"] != false {
			t.Fatalf("room 77 still exists on %s after destroy", n.id)
		}
	}
}

func sorted(ids ...uint64) []uint64 { slices.Sort(ids); return ids }

// without drops the events about the given participants (the observers' own joins).
func without(events []string, ids ...uint64) []string {
	var out []string
	for _, e := range events {
		_, id, _ := strings.Cut(e, ":")
		if !slices.ContainsFunc(ids, func(x uint64) bool { return fmt.Sprint(x) == id }) {
			out = append(out, e)
		}
	}
	return out
}

// offerOnly is a publisher's offer, for requests refused before it is negotiated.
func offerOnly(t *testing.T) *janusclient.JSEP {
	t.Helper()
	pc, err := clientAPI(t, nil).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &janusclient.JSEP{Type: "offer", SDP: offer.SDP}
}

func waitEventOf(t *testing.T, o *observer, ok func(map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		o.mu.Lock()
		for _, ev := range o.events {
			if ok(ev) {
				o.mu.Unlock()
				return
			}
		}
		o.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("observer %d: expected event did not arrive: %v", o.id, o.summary())
}

// TestClusterRedisRestart: Redis restarts empty; the nodes write themselves again, the owner
// takes its rooms back, and nobody is unpublished or removed: the room goes on.
func TestClusterRedisRestart(t *testing.T) {
	rs := redistest.Start(t)
	prefix := fmt.Sprintf("vr%d", time.Now().UnixNano())
	nodes := []*testNode{startNode(t, rs.Addr(), prefix, "node1", false), startNode(t, rs.Addr(), prefix, "node2", false)}
	const room = 1234
	o2, _ := joinObserver(t, nodes[1], room, "o2")
	p1 := startPublisher(t, nodes[0].c, room, "pub1")
	o2.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p1.id))
	before := roomOwner(t, 5*time.Second, room, nodes[0], 0)

	rs.Restart()
	after := roomOwner(t, 5*time.Second, room, nodes[0], 0)
	if after.Epoch < before.Epoch {
		t.Fatalf("after the restart the room's lease is %+v, before %+v: the epoch went back", after, before)
	}
	p2 := startPublisher(t, nodes[1].c, room, "pub2")
	o1, _ := joinObserver(t, nodes[0], room, "o1")
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{o1.id: false, o2.id: false, p1.id: true, p2.id: true}, nodes...)
	time.Sleep(3 * clustertest.NodeTTL) // past when a lapsed node would be declared gone
	for _, e := range o2.summary() {
		if e == fmt.Sprintf("unpublished:%d", p1.id) || e == fmt.Sprintf("leaving:%d", p1.id) {
			t.Fatalf("node 1's publisher dropped across the Redis restart: %v", o2.summary())
		}
	}
	waitParticipants(t, time.Second, room, map[uint64]bool{o1.id: false, o2.id: false, p1.id: true, p2.id: true}, nodes...)
}

// TestClusterDrain: the owner drains; another node takes the room, the draining node's
// participants stay in it, and the room goes on.
func TestClusterDrain(t *testing.T) {
	nodes := startCluster(t, 2)
	const room = 1234
	lease := roomOwner(t, 5*time.Second, room, nodes[0], 0)
	owner, other := nodes[0], nodes[1]
	if lease.Holder == other.id {
		owner, other = other, owner
	}
	onOwner, _ := joinObserver(t, owner, room, "stays")
	p := startPublisher(t, owner.c, room, "pub")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := owner.node.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	next := roomOwner(t, 5*time.Second, room, other, lease.Epoch)
	if next.Holder != other.id {
		t.Fatalf("after the drain the room is held by %+v", next)
	}
	o, _ := joinObserver(t, other, room, "new")
	onOwner.waitSummary(5*time.Second, fmt.Sprintf("publishers:%d", p.id))
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{onOwner.id: false, o.id: false, p.id: true}, nodes...)
	_, _, err := request(t, attach(t, owner.c), map[string]any{"request": "join", "ptype": "publisher", "room": room, "id": o.id}, nil)
	wantCode(t, err, videoroom.ErrIDExists)
}
