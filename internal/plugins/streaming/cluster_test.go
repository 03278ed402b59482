package streaming_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// TestClusterMountpoint: an rtp mountpoint created on node 1 is listed on node 2 (with its home's
// id); two viewers on node 2 and one on node 3 receive its audio and video (node 2 imports it
// once, node 1 sends it once per link); malformed announcements on the catalog's topic are
// dropped; an edit on node 1 shows on node 2; and when node 1 crashes, its mountpoint leaves
// node 2's list and its viewers elsewhere are told it stopped within 5 s.
func TestClusterMountpoint(t *testing.T) {
	nodes := startCluster(t, "node1", "node2", "node3")
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	admin1, admin2 := attach(t, n1.c), attach(t, n2.c)

	mp := createRTP(t, admin1, opusStream, vp8Stream)
	feedOpus(t, mp.port(t, "a", "port"))
	feedVP8(t, mp.port(t, "v", "port"))
	waitFor(t, "node 2 to list the mountpoint", 5*time.Second, func() bool { return listed(t, admin2)[mp.id] != nil })
	entry := listed(t, admin2)[mp.id]
	if entry["node"] != "node1" || entry["description"] != t.Name() || entry["type"] != "live" {
		t.Errorf("node 2 lists %v", entry)
	}
	if e := listed(t, admin1)[mp.id]; e["node"] != "node1" {
		t.Errorf("node 1 lists its own mountpoint as %v", e)
	}
	// The configuration's file mountpoints are each node's own: listed once, not announced.
	for _, admin := range []*janusclient.Handle{admin1, admin2} {
		l := listed(t, admin)
		if len(l) != 3 || l[2] == nil || l[3] == nil || l[2]["node"] != nil || l[3]["node"] != nil {
			t.Errorf("a node lists %v", l)
		}
	}
	info, _ := request(t, admin2, map[string]any{"request": "info", "id": mp.id}, nil)
	if in := info["info"].(map[string]any); in["node"] != "node1" || in["viewers"] != float64(0) {
		t.Errorf("node 2's info: %v", info)
	}

	v1, v2, v3 := watch(t, n2.c, mp.id, nil), watch(t, n2.c, mp.id, nil), watch(t, n3.c, mp.id, nil)
	for _, v := range []*viewer{v1, v2, v3} {
		v.waitPackets("a", 25, 10*time.Second)
		v.waitPackets("v", 25, 10*time.Second)
	}
	if s := n2.relay.Stats(); s.Imports != 1 {
		t.Errorf("node 2 imports %d feeds for two viewers, want 1", s.Imports)
	}
	// One export, sent once on each of the two links.
	if s := n1.relay.Stats(); s.Exports != 1 || len(s.Links) != 2 || s.Links[0].Exports != 1 || s.Links[1].Exports != 1 {
		t.Errorf("node 1's relay: %+v", s)
	}

	// Malformed announcements: raw garbage, a put of a kind of mountpoint that cannot be, a put
	// under another id. Node 2 drops them and goes on.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n1.eng.Publish(ctx, "topic:catalog/streaming", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	topic := n1.node.Topic("catalog/streaming")
	bogus := map[string]any{"id": "77", "item": map[string]any{"id": 77, "kind": "ondemand", "enabled": true,
		"streams": []any{map[string]any{"mid": "a", "kind": "audio", "codec": "opus"}}}}
	misnamed := map[string]any{"id": "78", "item": map[string]any{"id": 79, "kind": "rtp", "enabled": true,
		"streams": []any{map[string]any{"mid": "a", "kind": "audio", "codec": "opus"}}}}
	for _, body := range []any{bogus, misnamed, map[string]any{"id": ""}, "a string"} {
		if err := topic.Publish(ctx, "put", 0, body); err != nil {
			t.Fatal(err)
		}
	}
	request(t, admin1, map[string]any{"request": "edit", "id": mp.id, "new_description": "renamed"}, nil)
	waitFor(t, "node 2 to see the edit", 5*time.Second, func() bool { return listed(t, admin2)[mp.id]["description"] == "renamed" })
	if l := listed(t, admin2); len(l) != 3 {
		t.Errorf("node 2 lists %v after the malformed announcements", l)
	}
	if s := n2.node.Stats(); s.Malformed == 0 {
		t.Errorf("node 2 counted no malformed message: %+v", s)
	}
	before := v1.count("a")
	v1.waitPackets("a", before+10, 5*time.Second)

	// disable on node 1 pauses the viewers on node 2 too; enable resumes them.
	request(t, admin1, map[string]any{"request": "disable", "id": mp.id}, nil)
	waitFor(t, "node 2 to see the mountpoint disabled", 5*time.Second, func() bool { return listed(t, admin2)[mp.id]["enabled"] == false })
	time.Sleep(100 * time.Millisecond) // what was on its way when the announcement arrived
	paused := v1.count("a")
	time.Sleep(400 * time.Millisecond) // 20 packets' worth
	if got := v1.count("a"); got > paused+2 {
		t.Errorf("a viewer on node 2 got %d packets while the mountpoint was disabled", got-paused)
	}
	request(t, admin1, map[string]any{"request": "enable", "id": mp.id}, nil)
	v1.waitPackets("a", v1.count("a")+10, 5*time.Second)

	// Node 1 crashes: its record lapses (not deleted), its mountpoint leaves node 2's list, and
	// node 2's viewers are told as when a mountpoint is destroyed.
	crashed := time.Now()
	n1.crash()
	stopped := func(e map[string]any) bool {
		r, _ := e["result"].(map[string]any)
		return r != nil && r["status"] == "stopped"
	}
	for _, v := range []*viewer{v1, v2, v3} {
		v.waitEvent(5*time.Second-time.Since(crashed), stopped)
	}
	waitFor(t, "node 2 to drop node 1's mountpoint", 5*time.Second-time.Since(crashed), func() bool { return listed(t, admin2)[mp.id] == nil })
	t.Logf("viewers told and the list updated %v after the crash", time.Since(crashed).Round(time.Millisecond))
	waitFor(t, "node 2 to release its import", 5*time.Second, func() bool { return n2.relay.Stats().Imports == 0 })
}

// TestClusterSwitch: a viewer on node 2 switches from a local mountpoint to node 1's and back, on
// the same PeerConnection; media goes on from each source. A remote mountpoint whose last viewer
// left is no longer imported.
func TestClusterSwitch(t *testing.T) {
	nodes := startCluster(t, "node1", "node2")
	n1, n2 := nodes[0], nodes[1]
	admin1, admin2 := attach(t, n1.c), attach(t, n2.c)
	remote := createRTP(t, admin1, opusStream)
	local := createRTP(t, admin2, opusStream)
	stopRemote := feedOpus(t, remote.port(t, "a", "port"))
	stopLocal := feedOpus(t, local.port(t, "a", "port"))
	waitFor(t, "node 2 to list node 1's mountpoint", 5*time.Second, func() bool { return listed(t, admin2)[remote.id] != nil })

	v := watch(t, n2.c, local.id, nil)
	v.waitPackets("a", 10, 10*time.Second)
	data, _ := request(t, v.h, map[string]any{"request": "switch", "id": remote.id}, nil)
	if r := data["result"].(map[string]any); r["switched"] != "ok" {
		t.Fatalf("switch to the remote mountpoint: %v", data)
	}
	stopLocal()
	n := v.count("a")
	v.waitPackets("a", n+25, 10*time.Second) // only node 1's source sends now
	if s := n2.relay.Stats(); s.Imports != 1 {
		t.Errorf("node 2 imports %d feeds, want 1", s.Imports)
	}

	stopLocal = feedOpus(t, local.port(t, "a", "port"))
	defer stopLocal()
	data, _ = request(t, v.h, map[string]any{"request": "switch", "id": local.id}, nil)
	if r := data["result"].(map[string]any); r["switched"] != "ok" {
		t.Fatalf("switch back: %v", data)
	}
	stopRemote()
	n = v.count("a")
	v.waitPackets("a", n+25, 10*time.Second)
	waitFor(t, "node 2 to stop importing the mountpoint nobody watches", 5*time.Second, func() bool { return n2.relay.Stats().Imports == 0 })

	// Destroyed on node 1 through node 2 (its home answers): gone from both lists, and a viewer
	// on node 2 is told as a local mountpoint's viewers are.
	// kick_all on node 1 hangs up the viewers of its mountpoint on node 2 too.
	kicked := watch(t, n2.c, remote.id, nil)
	request(t, admin1, map[string]any{"request": "kick_all", "id": remote.id}, nil)
	kicked.waitEvent(5*time.Second, func(e map[string]any) bool {
		r, _ := e["result"].(map[string]any)
		return r != nil && r["status"] == "kicked_all"
	})

	watcher := watch(t, n2.c, remote.id, nil)
	request(t, admin2, map[string]any{"request": "destroy", "id": remote.id}, nil)
	watcher.waitEvent(5*time.Second, func(e map[string]any) bool {
		r, _ := e["result"].(map[string]any)
		return r != nil && r["status"] == "stopped"
	})
	waitFor(t, "the destroyed mountpoint to leave node 2's list", 5*time.Second, func() bool { return listed(t, admin2)[remote.id] == nil })
	if listed(t, admin1)[remote.id] != nil {
		t.Error("node 1 still lists the mountpoint destroyed through node 2")
	}
}
