package streaming_test

import (
	"encoding/binary"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/clustertest"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
	clusterrelay "github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/streaming"
	"github.com/strata-rtc/strata/internal/record"
)

// clusterNode is one strata node of a test cluster in this process: a clustertest node (engine,
// cluster listener, Node, relay), a streaming plugin with its Node and relay, and a Janus API
// (WebSocket) in front of it.
type clusterNode struct {
	cn    *clustertest.Node
	eng   *redisengine.Engine
	node  *cluster.Node
	relay *clusterrelay.Relay
	sp    *streaming.Plugin
	c     *janusclient.Client
}

func startClusterNode(t testing.TB, redisAddr, id string) *clusterNode {
	t.Helper()
	cn := clustertest.Start(t, redisAddr, "streamtest", id, janustest.Logger())
	n := &clusterNode{cn: cn, eng: cn.Eng, node: cn.Node, relay: cn.Relay}
	log := janustest.Logger().With("node", id)
	n.c = janustest.StartPlugin(t, func(cfg *config.Config) {
		// The sample file mountpoints every node has (live id 2, ondemand id 3) stay local on each.
		var files []config.StreamingMountpoint
		for _, m := range cfg.Plugins.Streaming.Mountpoints {
			if m.Type == "live" || m.Type == "ondemand" {
				files = append(files, m)
			}
		}
		cfg.Plugins.Streaming.Mountpoints = files
		cfg.Plugins.Streaming.Host = "127.0.0.1"
	}, log, func(cfg *config.Config, peers *peer.Factory) plugin.Plugin {
		n.sp = streaming.New(cfg.Plugins.Streaming, cfg.Plugins.VideoRoom.Allocation, record.SessionOptions{}, peers.Batcher(), log,
			streaming.WithCluster(n.node, n.relay))
		return n.sp
	})
	return n
}

// startCluster starts a node per id and waits until each sees all the others.
func startCluster(t testing.TB, ids ...string) []*clusterNode {
	t.Helper()
	redis := redistest.Start(t)
	var nodes []*clusterNode
	for _, id := range ids {
		nodes = append(nodes, startClusterNode(t, redis.Addr(), id))
	}
	waitFor(t, "the nodes to see each other", 5*time.Second, func() bool {
		for _, n := range nodes {
			if len(n.node.Nodes()) != len(nodes) {
				return false
			}
		}
		return true
	})
	return nodes
}

// crash cuts the node off as a kill -9 would (clustertest.Node.Crash).
func (n *clusterNode) crash() { n.cn.Crash() }

// listed returns the mountpoints a node lists: id → the entry.
func listed(t testing.TB, h *janusclient.Handle) map[uint64]map[string]any {
	t.Helper()
	data, _ := request(t, h, map[string]any{"request": "list"}, nil)
	out := map[uint64]map[string]any{}
	for _, e := range data["list"].([]any) {
		m := e.(map[string]any)
		out[uint64(m["id"].(float64))] = m
	}
	return out
}

// waitFor polls cond every 20 ms until it holds or within passes.
func waitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// feedOpus sends an Opus RTP packet (payload type 111) to 127.0.0.1:port every 20 ms until stop
// is called or the test ends.
func feedOpus(t testing.TB, port int) (stop func()) {
	return feedRTP(t, port, 111, 960, []byte{0xfc}) // an Opus TOC byte (20 ms frame)
}

// feedVP8 sends a one-packet VP8 keyframe (payload type 100) every 20 ms: every frame can start a
// viewer, so no keyframe request needs answering.
func feedVP8(t testing.TB, port int) (stop func()) {
	return feedRTP(t, port, 100, 1800, []byte{0x10, 0x00, 0x00, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00})
}

// feedRTP sends an RTP packet (payload type pt, marker set, the timestamp advancing by tsStep,
// payload then padding to 40 bytes) to 127.0.0.1:port every 20 ms until stop is called or the
// test ends.
func feedRTP(t testing.TB, port int, pt byte, tsStep uint32, payload []byte) (stop func()) {
	t.Helper()
	conn, err := net.Dial("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var once sync.Once
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		pkt := make([]byte, 12+40)
		pkt[0], pkt[1] = 0x80, 0x80|pt
		binary.BigEndian.PutUint32(pkt[8:], uint32(port)) // an SSRC of its own per source
		copy(pkt[12:], payload)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := uint32(0); ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			binary.BigEndian.PutUint16(pkt[2:], uint16(i))
			binary.BigEndian.PutUint32(pkt[4:], i*tsStep)
			_, _ = conn.Write(pkt)
		}
	}()
	stop = func() {
		once.Do(func() {
			close(done)
			<-finished
			_ = conn.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// opusStream and vp8Stream are an rtp mountpoint's streams (strata picks the ports).
var (
	opusStream = map[string]any{"type": "audio", "mid": "a", "port": 0, "pt": 111, "codec": "opus"}
	vp8Stream  = map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"}
)
