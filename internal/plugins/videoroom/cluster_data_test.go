package videoroom_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/clustertest"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// TestClusterData: a publisher's data channel on node 1 reaches subscribers on node 3, who ask
// for it as for a local feed's (by its data mid, or with the whole feed), on channels labelled
// with the feed's id, text and binary messages in order; the data crosses once for node 3
// whatever its subscribers, and the publisher leaving closes their channels.
func TestClusterData(t *testing.T) {
	nodes := startClusterWith(t, 3, true)
	const room = 1234
	watcher, _ := joinObserver(t, nodes[2], room, "watcher")
	pub := startDataPublisher(t, nodes[0].c, room)
	watcher.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", pub.id))
	label := strconv.FormatUint(pub.id, 10)

	byMid, attached := subscribeData(t, nodes[2].c, room, []map[string]any{{"feed": pub.id, "mid": pub.dataMid}}, nil)
	if d := dataEntry(attached); d == nil || fmt.Sprint(sourceIDs(d)) != fmt.Sprint([]uint64{pub.id}) {
		t.Errorf("attached on node 3: data stream %v", d)
	}
	whole, attached := subscribeData(t, nodes[2].c, room, []map[string]any{{"feed": pub.id}}, nil)
	if streams, _ := attached["streams"].([]any); len(streams) != 2 || dataEntry(attached) == nil {
		t.Errorf("attached to the whole remote feed: %v", attached["streams"])
	}
	byMid.waitChannels(1)
	whole.waitChannels(1)
	pub.send(t, "across", 40)
	byMid.expect(label, "across", 40)
	whole.expect(label, "across", 40)
	if st := nodes[2].relay.Stats(); st.Imports != 1 || st.DataReceived != 40 {
		t.Errorf("node 3 imports %d feeds and received %d data messages, want 1 and 40 (once for both subscribers)", st.Imports, st.DataReceived)
	}

	mustRequest(t, pub.h, map[string]any{"request": "leave"}, nil)
	byMid.waitClosed(label)
	whole.waitClosed(label)
}

// TestClusterDataOverPlainRTP: links of plain RTP carry no data, so a publisher's data is not
// offered on the other nodes: its whole feed there is its media, and its data mid is refused.
func TestClusterDataOverPlainRTP(t *testing.T) {
	rs := redistest.Start(t)
	prefix := fmt.Sprintf("vr%d", time.Now().UnixNano())
	n1 := startNode(t, rs.Addr(), prefix, "node1", true, clustertest.WithRelayTransport("rtp"))
	n2 := startNode(t, rs.Addr(), prefix, "node2", true, clustertest.WithRelayTransport("rtp"))
	const room = 1234
	watcher, _ := joinObserver(t, n2, room, "watcher")
	pub := startDataPublisher(t, n1.c, room)
	watcher.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", pub.id))
	_, attached := subscribeData(t, n2.c, room, []map[string]any{{"feed": pub.id}}, nil)
	if streams, _ := attached["streams"].([]any); len(streams) != 1 || dataEntry(attached) != nil {
		t.Errorf("attached to the whole feed over plain RTP: %v", attached["streams"])
	}
	h := attach(t, n2.c)
	_, _, err := request(t, h, map[string]any{"request": "join", "ptype": "subscriber", "room": room,
		"streams": []map[string]any{{"feed": pub.id, "mid": pub.dataMid}}}, nil)
	wantCode(t, err, videoroom.ErrNoSuchFeed)
}
