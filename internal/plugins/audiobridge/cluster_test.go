package audiobridge_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/clustertest"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/audiobridge"
	"github.com/strata-rtc/strata/internal/record"
)

// clusterNode is a strata node of a test cluster: a clustertest node (engine, Node, relay) with
// an audiobridge plugin on it and a Janus API (WebSocket) in front.
type clusterNode struct {
	*clustertest.Node
	c *janusclient.Client
}

func startClusterNode(t testing.TB, redisAddr, id string) *clusterNode {
	t.Helper()
	log := janustest.Logger().With("node", id)
	cn := clustertest.Start(t, redisAddr, "ab", id, log)
	c := janustest.StartPlugin(t, nil, log, func(cfg *config.Config, _ *peer.Factory) plugin.Plugin {
		return audiobridge.New(cfg.Plugins.AudioBridge, record.SessionOptions{}, log, audiobridge.WithCluster(cn.Node, cn.Relay))
	})
	return &clusterNode{Node: cn, c: c}
}

// listed is a room's participants as node n's listparticipants answers, sorted by id.
func listed(t testing.TB, n *clusterNode, room uint64) string {
	t.Helper()
	data, _ := mustRequest(t, attach(t, n.c), map[string]any{"request": "listparticipants", "room": room}, nil)
	var ids []uint64
	for _, p := range data["participants"].([]any) {
		ids = append(ids, uint64(p.(map[string]any)["id"].(float64)))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return fmt.Sprint(ids)
}

func sortedIDs(ids ...uint64) string {
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return fmt.Sprint(ids)
}

// TestRoomSpansNodes: room 1234 is mixed on node 1 (its first participant's node, which takes
// its lease); a participant on node 2 joins through node 2, with generate_offer (node 2 offers).
// Each hears the other's tone and not its own, both nodes list the same participants, node 1's
// participant hears of node 2's joining and muting; once node 2 crashed (its record lapses,
// nothing deleted) node 1's participant hears it left, within 5 s.
func TestRoomSpansNodes(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	const room = 1234

	a := joinTalker(t, n1.c, room, tones[0], 1, nil)
	b := joinTalker(t, n2.c, room, tones[2], 1, map[string]any{"generate_offer": true}) // node 2 offers
	waitEvent(t, a.h, 5*time.Second, func(d map[string]any) bool {
		ps, _ := d["participants"].([]any)
		return d["audiobridge"] == "joined" && len(ps) == 1 && ps[0].(map[string]any)["id"] == float64(b.id)
	})

	want := sortedIDs(a.id, b.id)
	for _, n := range []*clusterNode{n1, n2} {
		if got := listed(t, n, room); got != want {
			t.Errorf("%s lists %s, want %s", n.ID, got, want)
		}
	}

	// The mixes: a's from node 1's mixer directly, b's relayed back to node 2.
	waitHearEachOther(t, a, b, 0, 2, 600*time.Millisecond, 8*time.Second, "node 1's and node 2's participants")

	// Node 2's participant's decoder is node 1's: resetdecoder reaches it.
	if data, _ := mustRequest(t, b.h, map[string]any{"request": "resetdecoder"}, nil); data["audiobridge"] != "success" {
		t.Errorf("resetdecoder on node 2: %v", data)
	}

	// Node 2's participant mutes itself: node 1 mixes it out and tells its participant.
	mustRequest(t, b.h, map[string]any{"request": "configure", "muted": true}, nil)
	waitEvent(t, a.h, 5*time.Second, func(d map[string]any) bool {
		ps, _ := d["participants"].([]any)
		return len(ps) == 1 && ps[0].(map[string]any)["id"] == float64(b.id) && ps[0].(map[string]any)["muted"] == true
	})
	time.Sleep(300 * time.Millisecond)
	if got := heardTones(a, 600*time.Millisecond); got[2] > 0.01 {
		t.Errorf("node 1's participant still hears the muted %v Hz tone at %.3f", tones[2], got[2])
	}

	crashed := time.Now()
	n2.Crash()
	waitEvent(t, a.h, 5*time.Second, func(d map[string]any) bool { return d["leaving"] == float64(b.id) })
	t.Logf("node 2's participant left the room %v after node 2 crashed", time.Since(crashed).Round(time.Millisecond))
	if got := listed(t, n1, room); got != sortedIDs(a.id) {
		t.Errorf("after node 2 crashed node 1 lists %s, want %s", got, sortedIDs(a.id))
	}
}

// TestOwnerFailover: room 1234 is mixed on node 1, with one participant on each of three nodes.
// Node 1 crashes: node 2 or 3 takes the room's lease at the next epoch, its participant becomes
// a member of its mixer and the other node's re-joins it, the two hear each other again, and
// both hear, within 5 s of the crash, that node 1's participant left.
func TestOwnerFailover(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	n3 := startClusterNode(t, redis.Addr(), "node-3")
	const room = 1234

	a := joinTalker(t, n1.c, room, tones[0], 1, nil)
	b := joinTalker(t, n2.c, room, tones[1], 1, nil)
	c := joinTalker(t, n3.c, room, tones[2], 1, nil)
	waitHearEachOther(t, b, c, 1, 2, 400*time.Millisecond, 8*time.Second, "mixed on node 1")
	before := roomLease(t, n2, room)
	if before.Holder != "node-1" {
		t.Fatalf("room lease %+v: want node-1's", before)
	}

	crashed := time.Now()
	n1.Crash()
	waitHearEachOther(t, b, c, 1, 2, 400*time.Millisecond, 10*time.Second, "after node 1 crashed")
	after := roomLease(t, n2, room)
	t.Logf("the room moved to %s at epoch %d (was %d) and its audio resumed %v after the crash", after.Holder, after.Epoch,
		before.Epoch, time.Since(crashed).Round(time.Millisecond))
	if after.Holder == "node-1" || after.Epoch <= before.Epoch {
		t.Errorf("room lease %+v after node 1 crashed (before: %+v)", after, before)
	}
	// Node 1's own participant did not come back: the others hear it left.
	for _, p := range []*talker{b, c} {
		waitEvent(t, p.h, 5*time.Second-time.Since(crashed), func(d map[string]any) bool { return d["leaving"] == float64(a.id) })
	}
	t.Logf("node 1's participant left the room %v after the crash", time.Since(crashed).Round(time.Millisecond))
	want := sortedIDs(b.id, c.id)
	for _, n := range []*clusterNode{n2, n3} {
		if got := listed(t, n, room); got != want {
			t.Errorf("%s lists %s, want %s", n.ID, got, want)
		}
	}
}

// waitHearEachOther waits up to within for p and q, sending tones[pi] and tones[qi], to hear each
// other (the other's tone at least 8 % of a window of their mix) and not themselves (at most 1 %).
func waitHearEachOther(t testing.TB, p, q *talker, pi, qi int, window, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		gp, gq := heardTones(p, window), heardTones(q, window)
		if gp[qi] >= 0.08 && gp[pi] <= 0.01 && gq[pi] >= 0.08 && gq[qi] <= 0.01 {
			t.Logf("%s: one hears %.3f, the other %.3f", what, gp, gq)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the participant sending %v Hz hears %.3f, the one sending %v Hz %.3f", what, tones[pi], gp, tones[qi], gq)
		}
	}
}

// roomLease is the lease on a room as the engine holds it.
func roomLease(t testing.TB, n *clusterNode, room uint64) cluster.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l, _, err := n.Eng.Holder(ctx, fmt.Sprintf("audiobridge/%d", room))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDrainHandsTheRoomOver: node 1 mixes room 1234 for its participant and node 2's; node 1
// drains (its lease released): node 2 takes the room, its participant becomes a member of its
// mixer, node 1's becomes a seat re-joined to node 2, and the two hear each other again.
func TestDrainHandsTheRoomOver(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	const room = 1234

	a := joinTalker(t, n1.c, room, tones[0], 1, nil)
	b := joinTalker(t, n2.c, room, tones[2], 1, nil)
	waitHearEachOther(t, a, b, 0, 2, 400*time.Millisecond, 8*time.Second, "mixed on node 1")
	before := roomLease(t, n2, room)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := n1.Node.Node.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l := roomLease(t, n2, room); l.Holder != "node-2"; l = roomLease(t, n2, room) {
		if time.Now().After(deadline) {
			t.Fatalf("room lease %+v after node 1 drained (before: %+v): want node-2's", l, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Node 2 lists its own room now: node 1's participant is in it once node 1 re-joined it.
	want := sortedIDs(a.id, b.id)
	for got := listed(t, n2, room); got != want; got = listed(t, n2, room) {
		if time.Now().After(deadline) {
			t.Fatalf("node 2 lists %s, want %s", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitHearEachOther(t, a, b, 0, 2, 400*time.Millisecond, 8*time.Second, "mixed on node 2")
	if got := listed(t, n1, room); got != want {
		t.Errorf("node 1 lists %s, want %s", got, want)
	}
}

// TestCreatedRoomSpansNodes: a room created through node 2's API exists on node 1 too, mixed on
// node 2 (which took its lease); an edit through node 1 is made by the owner and reaches node 1's
// copy; participants on both nodes hear each other; node 1's
// participant's audio levels, relayed, make node 2 announce it talking to both; a kick sent to
// node 1 reaches the owner and takes node 1's participant out; a destroy sent to node 1 reaches
// the owner, and node 2's participant hears the room is destroyed.
func TestCreatedRoomSpansNodes(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	const room = 4321

	mustRequest(t, attach(t, n2.c), map[string]any{"request": "create", "room": room, "secret": "s",
		"audiolevel_event": true, "audio_active_packets": 10, "audio_level_average": 40}, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := mustRequest(t, attach(t, n1.c), map[string]any{"request": "exists", "room": room}, nil)
		if data["exists"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1 does not know room %d created on node 2", room)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// An edit sent to node 1 is the owner's; node 1's copy follows.
	mustRequest(t, attach(t, n1.c), map[string]any{"request": "edit", "room": room, "secret": "s", "new_description": "spans"}, nil)
	for described := ""; described != "spans"; {
		data, _ := mustRequest(t, attach(t, n1.c), map[string]any{"request": "list"}, nil)
		for _, r := range data["list"].([]any) {
			if r := r.(map[string]any); r["room"] == float64(room) {
				described, _ = r["description"].(string)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1 describes room %d as %q after the edit", room, described)
		}
		time.Sleep(20 * time.Millisecond)
	}

	a := joinTalker(t, n1.c, room, tones[0], 1, nil)
	b := joinTalker(t, n2.c, room, tones[2], 1, nil)
	if l := roomLease(t, n1, room); l.Holder != "node-2" {
		t.Errorf("room lease %+v: want node-2's, which created the room", l)
	}
	waitHearEachOther(t, a, b, 0, 2, 400*time.Millisecond, time.Until(deadline.Add(3*time.Second)), "in the API-created room")

	talking := func(d map[string]any) bool { return d["audiobridge"] == "talking" && d["id"] == float64(a.id) }
	waitEvent(t, b.h, 5*time.Second, talking)
	waitEvent(t, a.h, 5*time.Second, talking)

	mustRequest(t, attach(t, n1.c), map[string]any{"request": "kick", "room": room, "id": a.id, "secret": "s"}, nil)
	kicked := func(d map[string]any) bool { return d["kicked"] == float64(a.id) }
	waitEvent(t, a.h, 5*time.Second, kicked)
	waitEvent(t, b.h, 5*time.Second, kicked)
	for _, n := range []*clusterNode{n1, n2} {
		if got := listed(t, n, room); got != sortedIDs(b.id) {
			t.Errorf("after the kick %s lists %s, want %s", n.ID, got, sortedIDs(b.id))
		}
	}

	data, _ := mustRequest(t, attach(t, n1.c), map[string]any{"request": "destroy", "room": room, "secret": "s"}, nil)
	if data["audiobridge"] != "destroyed" {
		t.Fatalf("destroy through node 1: %v", data)
	}
	waitEvent(t, b.h, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "destroyed" })
	// Node 1 hears of it on the rooms topic.
	deadline = time.Now().Add(5 * time.Second)
	for _, n := range []*clusterNode{n2, n1} {
		for {
			data, _ := mustRequest(t, attach(t, n.c), map[string]any{"request": "exists", "room": room}, nil)
			if data["exists"] == false {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: room %d still exists after destroy", n.ID, room)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestChangeRoomAcrossNodes: a participant of node 2 moves, on the same PeerConnection, from a
// room node 2 mixes to one node 1 mixes and back: it hears each room's talker in turn, and each
// room's other participant hears it arrive.
func TestChangeRoomAcrossNodes(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	const here, there = 5678, 1234

	a := joinTalker(t, n1.c, there, tones[0], 1, nil) // node 1 takes room 1234
	mustRequest(t, attach(t, n2.c), map[string]any{"request": "create", "room": here}, nil)
	b := joinTalker(t, n2.c, here, tones[2], 1, nil)
	mover := joinTalker(t, n2.c, here, 0, 1, nil)
	hears := func(want, not int, what string) {
		t.Helper()
		deadline := time.Now().Add(8 * time.Second)
		for {
			got := heardTones(mover, 400*time.Millisecond)
			if got[want] >= 0.08 && got[not] <= 0.01 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the mover hears %.3f", what, got)
			}
		}
	}
	hears(2, 0, "in node 2's room")

	arrived := func(room uint64, id any) func(map[string]any) bool {
		return func(d map[string]any) bool {
			ps, _ := d["participants"].([]any)
			return d["audiobridge"] == "joined" && d["room"] == float64(room) && len(ps) == 1 && ps[0].(map[string]any)["id"] == id
		}
	}
	data, _ := mustRequest(t, mover.h, map[string]any{"request": "changeroom", "room": there}, nil)
	if data["audiobridge"] != "roomchanged" || data["room"] != float64(there) {
		t.Fatalf("changeroom to node 1's room: %v", data)
	}
	idThere := data["id"]
	waitEvent(t, a.h, 5*time.Second, arrived(there, idThere))
	hears(0, 2, "in node 1's room")

	data, _ = mustRequest(t, mover.h, map[string]any{"request": "changeroom", "room": here}, nil)
	if data["audiobridge"] != "roomchanged" || data["room"] != float64(here) {
		t.Fatalf("changeroom back to node 2's room: %v", data)
	}
	waitEvent(t, b.h, 5*time.Second, arrived(here, data["id"]))
	waitEvent(t, a.h, 5*time.Second, func(d map[string]any) bool { return d["leaving"] == idThere })
	hears(2, 0, "back in node 2's room")
}

// TestBadRoomEventsAreContained: on room 1234's topic, a malformed message and an event stamped
// with an epoch older than the owner's are dropped: node 2's participant gets neither, and the
// owner's next real event still reaches it.
func TestBadRoomEventsAreContained(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	const room = 1234

	owner := attach(t, n1.c)
	mustRequest(t, owner, map[string]any{"request": "join", "room": room, "display": "owner's"}, nil)
	seat := attach(t, n2.c)
	mustRequest(t, seat, map[string]any{"request": "join", "room": room, "display": "seat"}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := n1.Eng.Publish(ctx, "topic:audiobridge/1234", []byte(`{"topic":"audiobridge/1234","from":"x","seq":1,"kind":"event","body":{`)); err != nil {
		t.Fatal(err)
	}
	stale := map[string]any{"room": room, "data": map[string]any{"audiobridge": "event", "room": room, "leaving": 999}}
	if err := n1.Node.Node.Topic("audiobridge/1234").Publish(ctx, "event", 0, stale); err != nil {
		t.Fatal(err)
	}
	mustRequest(t, owner, map[string]any{"request": "configure", "display": "renamed"}, nil)
	got := waitEvent(t, seat, 5*time.Second, func(d map[string]any) bool {
		ps, _ := d["participants"].([]any)
		return d["leaving"] != nil || len(ps) == 1 && ps[0].(map[string]any)["display"] == "renamed"
	})
	if got["leaving"] != nil {
		t.Fatalf("node 2's participant got the stale event %v", got)
	}
	if st := n2.Node.Node.Stats(); st.Malformed == 0 {
		t.Errorf("node 2 counted no malformed message: %+v", st)
	}
}

// TestRedisRestartKeepsTheRoom: the redis-server restarts empty under a room mixed on node 1 for
// participants on nodes 1 and 2: node 1 takes the lease again (at a higher epoch), nobody is told
// anyone left, and the two go on hearing each other.
func TestRedisRestartKeepsTheRoom(t *testing.T) {
	redis := redistest.Start(t)
	n1 := startClusterNode(t, redis.Addr(), "node-1")
	n2 := startClusterNode(t, redis.Addr(), "node-2")
	const room = 1234

	a := joinTalker(t, n1.c, room, tones[0], 1, nil)
	b := joinTalker(t, n2.c, room, tones[2], 1, nil)
	waitHearEachOther(t, a, b, 0, 2, 400*time.Millisecond, 8*time.Second, "before the restart")
	before := roomLease(t, n1, room)

	redis.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l, held, err := n1.Eng.Holder(ctx, "audiobridge/1234")
		cancel()
		if err == nil && held {
			if l.Holder != "node-1" || l.Epoch <= before.Epoch {
				t.Fatalf("room lease %+v after the restart (before: %+v): want node-1's again, later", l, before)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nobody holds room %d's lease after the restart: %v", room, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a roster, had anyone been lost, would have gone out by now
	waitHearEachOther(t, a, b, 0, 2, 400*time.Millisecond, 8*time.Second, "after the restart")
	for _, p := range []*talker{a, b} {
		for {
			select {
			case ev := <-p.h.Events():
				if ev.PluginData != nil && strings.Contains(string(ev.PluginData.Data), `"leaving"`) {
					t.Errorf("participant %d was told %s", p.id, ev.PluginData.Data)
				}
				continue
			default:
			}
			break
		}
	}
	if got, want := listed(t, n1, room), sortedIDs(a.id, b.id); got != want {
		t.Errorf("node 1 lists %s, want %s", got, want)
	}
}
