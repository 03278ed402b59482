package videoroom_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/cluster/redistest"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// TestClusterMedia: publishers on nodes 1 and 2, subscribers on node 3 with the same join
// requests as for a local feed: each feed is relayed once to node 3 (two subscribers of one feed
// share its import), every simulcast layer crosses (the subscriber reaches the top one), one
// PeerConnection takes feeds of two nodes, a switch moves an m-line to another node's feed, an
// rtp_forward of another node's feed runs on that node, and when a publisher's node dies its
// subscribers on node 3 lose the feed within 5 s.
func TestClusterMedia(t *testing.T) {
	nodes := startClusterWith(t, 3, true)
	const room = 1234
	watcher, _ := joinObserver(t, nodes[2], room, "watcher")
	p1 := startPublisher(t, nodes[0].c, room, "pub1")
	p2 := startPublisher(t, nodes[1].c, room, "pub2")
	watcher.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", p1.id), fmt.Sprintf("publishers:%d", p2.id))

	s1 := subscribe(t, nodes[2].c, room, p1.id, nil)
	s2 := subscribe(t, nodes[2].c, room, p2.id, nil)
	s1b := subscribe(t, nodes[2].c, room, p1.id, nil)
	for i, s := range []*testSubscriber{s1, s2, s1b} {
		if d := s.waitFrame(time.Now().Add(-time.Minute), 15*time.Second, func(l int) bool { return l == 2 }); d < 0 {
			t.Fatalf("subscriber %d on node 3 got no top-layer frame of a feed relayed from another node", i)
		}
	}
	if st := nodes[2].relay.Stats(); st.Imports != 2 {
		t.Fatalf("node 3 imports %d feeds, want 2 (one per feed, whatever its subscribers): %+v", st.Imports, st)
	}
	if st := nodes[0].relay.Stats(); st.Exports < 1 {
		t.Fatalf("node 1 exports %d feeds: %+v", st.Exports, st)
	}

	// One PeerConnection on node 3 with both remote feeds, and a switch of one of its m-lines.
	both := subscribeFeeds(t, nodes[2].c, room, p1.id, p2.id)
	both.waitTracks(t, 2, 15*time.Second)
	sw, _ := mustRequest(t, s1.h, map[string]any{"request": "switch", "streams": []map[string]any{{"sub_mid": "0", "feed": p2.id, "mid": "0"}}}, nil)
	if sw["switched"] != "ok" || sw["changes"] != float64(1) {
		t.Fatalf("switch to another node's feed: %v", sw)
	}

	forwardAcrossNodes(t, nodes, room, p1.id)

	// Node 1 dies: its feed leaves node 3's subscriptions (renegotiated without it) within 5 s;
	// node 2's keeps flowing.
	nodes[0].crash()
	died := time.Now()
	for _, s := range []*testSubscriber{s1b} { // s1 was switched to node 2's feed
		s.waitEvent(func(ev map[string]any) bool {
			streams, _ := ev["streams"].([]any)
			return ev["videoroom"] == "updated" && len(streams) == 0
		})
	}
	if d := time.Since(died); d > 5*time.Second {
		t.Fatalf("the dead node's feed left its subscribers after %v", d)
	}
	t.Logf("node 1's feed removed from node 3's subscribers %v after its death", time.Since(died))
	mark := time.Now()
	for _, s := range []*testSubscriber{s2, s1} {
		if d := s.waitFrame(mark, 5*time.Second, func(int) bool { return true }); d < 0 {
			t.Fatal("node 2's feed stopped when node 1 died")
		}
	}
}

// TestClusterBadInput: what a node (or anyone with access to Redis) publishes on a room's topic
// is checked: malformed events are dropped and logged, an event of an older owner epoch is
// ignored (a stale owner cannot destroy the room), and a feed announced by a node that does not
// have it fails its subscriber with a clear error. The nodes keep serving.
func TestClusterBadInput(t *testing.T) {
	rs := redistest.Start(t)
	prefix := fmt.Sprintf("vr%d", time.Now().UnixNano())
	n1 := startNode(t, rs.Addr(), prefix, "node1", true)
	n2 := startNode(t, rs.Addr(), prefix, "node2", true)
	const room = 1234
	o1, _ := joinObserver(t, n1, room, "o1")
	o2, _ := joinObserver(t, n2, room, "o2")
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{o1.id: false, o2.id: false}, n1, n2)
	lease := roomOwner(t, 5*time.Second, room, n1, 0)

	rogue := startRogue(t, rs.Addr(), prefix)
	topic := rogue.Topic(fmt.Sprintf("videoroom/%d", room))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, ev := range []struct {
		kind  string
		epoch uint64
		body  any
	}{
		{"member", lease.Epoch, map[string]any{"id": 0, "node": "x"}},
		{"member", lease.Epoch, map[string]any{"id": 5, "node": "x", "streams": []map[string]any{{"mid": "0", "kind": "video", "codec": "nope"}}}},
		{"state", lease.Epoch, []int{1, 2}},
		{"notice", lease.Epoch, map[string]any{"action": "explode"}},
		{"launch", lease.Epoch, map[string]any{}},
		{"notice", lease.Epoch - 1, map[string]any{"action": "destroy"}}, // a stale owner's decision
		// A feed of a node that is not in the cluster.
		{"member", lease.Epoch, map[string]any{"id": 99, "node": "ghost", "active": true,
			"streams": []map[string]any{{"mid": "0", "kind": "video", "codec": "vp8"}}}},
	} {
		if err := topic.Publish(ctx, ev.kind, ev.epoch, ev.body); err != nil {
			t.Fatal(err)
		}
	}
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{o1.id: false, o2.id: false, 99: true}, n1, n2)
	h := attach(t, n2.c)
	_, _, err := request(t, h, map[string]any{"request": "join", "ptype": "subscriber", "room": room, "streams": []map[string]any{{"feed": 99}}}, nil)
	wantCode(t, err, videoroom.ErrNoSuchFeed)
	t.Logf("subscribing to a feed nobody has: %v", err)
	// Another node's forwarding request is run only for the callee's own publishers, and only if
	// it is one: anything else is refused with a Janus error.
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"request":"destroy","room":1234}`, videoroom.ErrInvalidRequest},
		{`{"request":"rtp_forward","room":999,"publisher_id":1}`, videoroom.ErrInvalidElement},
		{fmt.Sprintf(`{"request":"rtp_forward","room":1234,"publisher_id":%d,"host":"127.0.0.1","streams":[]}`, o2.id), videoroom.ErrNoSuchFeed},
	} {
		var ans struct {
			Code int `json:"error_code"`
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := rogue.Call(cctx, "node1", "/videoroom", map[string]any{"op": "forward", "room": room, "body": json.RawMessage(c.body)}, &ans)
		ccancel()
		if err != nil || ans.Code != c.code {
			t.Errorf("forward %s from another node: error code %d (%v), want %d", c.body, ans.Code, err, c.code)
		}
	}
	// The room was not destroyed and the nodes go on deciding.
	late, _ := joinObserver(t, n2, room, "late")
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{o1.id: false, o2.id: false, late.id: false, 99: true}, n1, n2)
}

// multiSubscriber is a subscriber to several feeds on one PeerConnection that counts packets per
// track.
type multiSubscriber struct {
	mu      sync.Mutex
	packets map[string]int
}

func subscribeFeeds(t *testing.T, c *janusclient.Client, room uint64, feeds ...uint64) *multiSubscriber {
	t.Helper()
	h := attach(t, c)
	var streams []map[string]any
	for _, f := range feeds {
		streams = append(streams, map[string]any{"feed": f})
	}
	data, offer := mustRequest(t, h, map[string]any{"request": "join", "ptype": "subscriber", "room": room, "streams": streams}, nil)
	if data["videoroom"] != "attached" || offer == nil {
		t.Fatalf("subscribe: %v", data)
	}
	pc, err := clientAPI(t, nil).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	m := &multiSubscriber{packets: map[string]int{}}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			m.mu.Lock()
			m.packets[tr.ID()]++
			m.mu.Unlock()
		}
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRequest(t, h, map[string]any{"request": "start"}, completeLocal(t, pc, answer))
	return m
}

// waitTracks waits until n tracks brought at least 50 packets each.
func (m *multiSubscriber) waitTracks(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m.mu.Lock()
		full := 0
		for _, c := range m.packets {
			if c >= 50 {
				full++
			}
		}
		got := fmt.Sprint(m.packets)
		m.mu.Unlock()
		if full >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("packets per track %s, want %d tracks", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// forwardAcrossNodes: rtp_forward of node 1's publisher asked on node 3 runs on node 1, where the
// publisher's Receiver is, and its packets arrive; listforwarders on node 2 lists it;
// stop_rtp_forward on node 3 stops it; a publisher no node has is refused.
func forwardAcrossNodes(t *testing.T, nodes []*testNode, room, pub uint64) {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	port := conn.LocalAddr().(*net.UDPAddr).Port
	h3 := attach(t, nodes[2].c)
	data, _ := mustRequest(t, h3, map[string]any{"request": "rtp_forward", "room": room, "publisher_id": pub, "host": "127.0.0.1",
		"streams": []map[string]any{{"mid": "0", "port": port, "ssrc": 4321}}}, nil)
	fwds, _ := data["forwarders"].([]any)
	if data["videoroom"] != "rtp_forward" || data["publisher_id"] != float64(pub) || len(fwds) != 1 {
		t.Fatalf("rtp_forward on node 3 of node 1's publisher: %v", data)
	}
	streamID := fwds[0].(map[string]any)["stream_id"]
	// It runs on node 1, where the publisher's Receiver is: node 1 has it among its own
	// forwarders, node 3 (which asked, and imports the feed) has none.
	if got := ownForwarders(t, nodes[1], nodes[0].id, room); got != 1 {
		t.Errorf("node 1 has %d publishers with forwarders of its own, want 1", got)
	}
	if got := ownForwarders(t, nodes[1], nodes[2].id, room); got != 0 {
		t.Errorf("node 3 has %d publishers with forwarders of its own, want 0", got)
	}
	buf := make([]byte, 1500)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := conn.Read(buf)
	if err != nil || n < 12 || buf[0]>>6 != 2 || binary.BigEndian.Uint32(buf[8:12]) != 4321 {
		t.Fatalf("forwarded packet: %d bytes (%v), want RTP with SSRC 4321", n, err)
	}

	list, _ := mustRequest(t, attach(t, nodes[1].c), map[string]any{"request": "listforwarders", "room": room}, nil)
	pubs, _ := list["publishers"].([]any)
	if len(pubs) != 1 || pubs[0].(map[string]any)["publisher_id"] != float64(pub) {
		t.Fatalf("listforwarders on node 2: %v, want node 1's publisher's forwarder", list)
	}

	stopped, _ := mustRequest(t, h3, map[string]any{"request": "stop_rtp_forward", "room": room, "publisher_id": pub, "stream_id": streamID}, nil)
	if stopped["videoroom"] != "stop_rtp_forward" {
		t.Fatalf("stop_rtp_forward on node 3: %v", stopped)
	}
	// What was in flight arrives; then nothing.
	for _ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); ; {
		if _, err := conn.Read(buf); err != nil {
			break
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := conn.Read(buf); err == nil {
		t.Fatalf("a %d-byte packet forwarded after stop_rtp_forward", n)
	}
	if list, _ := mustRequest(t, h3, map[string]any{"request": "listforwarders", "room": room}, nil); len(list["publishers"].([]any)) != 0 {
		t.Fatalf("listforwarders after the stop: %v", list)
	}
	_, _, err = request(t, h3, map[string]any{"request": "rtp_forward", "room": room, "publisher_id": 424242, "host": "127.0.0.1",
		"streams": []map[string]any{{"mid": "0", "port": port}}}, nil)
	wantCode(t, err, videoroom.ErrNoSuchFeed)
}

// ownForwarders asks node to (as another node does) how many of room's publishers have forwarders
// on it: a node answers a forwarding request for its own publishers only.
func ownForwarders(t *testing.T, from *testNode, to string, room uint64) int {
	t.Helper()
	var ans struct {
		Code int `json:"error_code"`
		Data struct {
			Publishers []any `json:"publishers"`
		} `json:"data"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body := map[string]any{"request": "listforwarders", "room": room}
	if err := from.node.Call(ctx, to, "/videoroom", map[string]any{"op": "forward", "room": room, "body": body}, &ans); err != nil || ans.Code != 0 {
		t.Fatalf("listforwarders of %s's own: %v (error %d)", to, err, ans.Code)
	}
	return len(ans.Data.Publishers)
}
