package videoroom_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/bwe"
	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/transport/wsapi"
)

// clusterTiming is the cluster's clock in these tests: a node is gone 600 ms after its last
// heartbeat, a lease lapses as soon.
const (
	testHeartbeat = 100 * time.Millisecond
	testNodeTTL   = 600 * time.Millisecond
)

// testNode is one strata node of a test cluster in this process: its own cluster.Node over the
// test's redis-server, its cluster listener, a videoroom plugin with the Node as its View, and a
// Janus API (WebSocket) in front of it.
type testNode struct {
	t     testing.TB
	id    string
	eng   *redisengine.Engine
	node  *cluster.Node
	vr    *videoroom.Plugin
	c     *janusclient.Client
	intl  *httptest.Server
	api   *httptest.Server
	gw    *gateway.Gateway
	peers *peer.Factory
	ws    *wsapi.Handler
	relay *relay.Relay // nil without media between nodes
	// unwatch stops telling the relay of gone nodes.
	unwatch func()
	// dead makes the node unreachable by the others and them by it (crash).
	dead atomic.Bool
	once sync.Once
}

// deadTransport fails every node-to-node request of a crashed node.
type deadTransport struct{ n *testNode }

func (d deadTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.n.dead.Load() {
		return nil, errors.New("node crashed")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// startNode starts a node; withRelay gives it a media relay (internal/cluster/relay) on loopback.
func startNode(t testing.TB, redisAddr, prefix, id string, withRelay bool) *testNode {
	t.Helper()
	log := testLogger().With("node", id)
	n := &testNode{t: t, id: id}
	eng, err := redisengine.New(redisengine.Options{Address: redisAddr, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	n.eng = eng
	var handler atomic.Pointer[http.Handler]
	n.intl = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := handler.Load()
		if n.dead.Load() || h == nil {
			http.Error(w, "node down", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	}))
	node, err := cluster.New(cluster.Config{NodeID: id, Internal: n.intl.URL, Secret: "test-secret", Heartbeat: testHeartbeat,
		NodeTTL: testNodeTTL, LeaseTTL: testNodeTTL}, eng, cluster.WithLogger(log),
		cluster.WithHTTPClient(&http.Client{Transport: deadTransport{n}}))
	if err != nil {
		t.Fatal(err)
	}
	n.node = node
	h := node.Handler()
	handler.Store(&h)

	cfg := config.Default()
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	ccOpts, err := bwe.PeerOptions(cfg.Media, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.peers, err = peer.NewFactory(cfg.Media, log, ccOpts...); err != nil {
		t.Fatal(err)
	}
	var rl videoroom.Relay
	if withRelay {
		r, err := relay.New(relay.Config{NodeID: id, Address: "127.0.0.1", FailedTimeout: time.Second, Log: log}, node)
		if err != nil {
			t.Fatal(err)
		}
		n.relay, rl = r, r
		n.unwatch = node.Watch(func(ev cluster.NodeEvent) {
			if ev.Kind == cluster.NodeGone {
				r.PeerGone(ev.Node.ID)
			}
		})
	}
	n.vr = videoroom.New(cfg.Plugins.VideoRoom, record.SessionOptions{}, log, videoroom.WithCluster(node, rl))
	n.gw = gateway.New(cfg, n.peers, []plugin.Plugin{n.vr}, log, nil)
	n.ws = wsapi.New(n.gw, cfg)
	n.api = httptest.NewServer(n.ws)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n.c, err = janusclient.Dial(ctx, "ws://"+n.api.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	return n
}

func (n *testNode) close() {
	n.once.Do(func() {
		_ = n.c.Close()
		n.gw.Close()
		n.ws.Close()
		n.api.Close()
		n.peers.Close()
		if n.relay != nil {
			n.unwatch()
			n.relay.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = n.node.Stop(ctx)
		n.intl.Close()
		_ = n.eng.Close()
	})
}

// crash cuts the node off as a kill -9 would, seen from the others: it answers no node, reaches
// none, and stops refreshing its record and leases (which lapse after node_ttl).
func (n *testNode) crash() {
	n.dead.Store(true)
	_ = n.eng.Close()
}

// observer is a participant that publishes nothing and records every event of its handle.
type observer struct {
	t  testing.TB
	h  *janusclient.Handle
	id uint64

	mu     sync.Mutex
	events []map[string]any
}

func joinObserver(t testing.TB, n *testNode, room uint64, display string) (*observer, map[string]any) {
	t.Helper()
	o := &observer{t: t, h: attach(t, n.c)}
	joined, _ := mustRequest(t, o.h, map[string]any{"request": "join", "ptype": "publisher", "room": room, "display": display}, nil)
	o.id = uint64(joined["id"].(float64))
	go func() {
		for ev := range o.h.Events() {
			if ev.PluginData == nil {
				continue
			}
			var d map[string]any
			if json.Unmarshal(ev.PluginData.Data, &d) == nil {
				o.mu.Lock()
				o.events = append(o.events, d)
				o.mu.Unlock()
			}
		}
	}()
	return o, joined
}

// summary names the room events the observer got, in order: "publishers:<id>", "unpublished:<id>",
// "leaving:<id>", "kicked:<id>", "joining:<id>"; those about itself are left out.
func (o *observer) summary() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, ev := range o.events {
		for _, key := range []string{"publishers", "unpublished", "leaving", "kicked", "joining"} {
			v, ok := ev[key]
			if !ok {
				continue
			}
			switch v := v.(type) {
			case []any:
				for _, p := range v {
					out = append(out, fmt.Sprintf("%s:%.0f", key, p.(map[string]any)["id"].(float64)))
				}
			case float64:
				out = append(out, fmt.Sprintf("%s:%.0f", key, v))
			case map[string]any:
				out = append(out, fmt.Sprintf("%s:%.0f", key, v["id"].(float64)))
			}
		}
	}
	return out
}

// waitSummary waits (within) until the observer's events include every one of want.
func (o *observer) waitSummary(within time.Duration, want ...string) time.Duration {
	o.t.Helper()
	start := time.Now()
	for {
		got := strings.Join(o.summary(), " ") + " "
		missing := ""
		for _, w := range want {
			if !strings.Contains(got, w+" ") {
				missing = w
				break
			}
		}
		if missing == "" {
			return time.Since(start)
		}
		if time.Since(start) > within {
			o.t.Fatalf("observer %d: no %s within %v; events: %v", o.id, missing, within, o.summary())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// participants lists a room's participants as a node's listparticipants answers.
func participants(t testing.TB, n *testNode, room uint64) map[uint64]bool {
	t.Helper()
	h := attach(t, n.c)
	data, _ := mustRequest(t, h, map[string]any{"request": "listparticipants", "room": room}, nil)
	out := map[uint64]bool{}
	for _, p := range data["participants"].([]any) {
		m := p.(map[string]any)
		out[uint64(m["id"].(float64))] = m["publisher"].(bool)
	}
	return out
}

// waitParticipants waits until every node lists exactly want (id → publishing).
func waitParticipants(t testing.TB, within time.Duration, room uint64, want map[uint64]bool, nodes ...*testNode) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, n := range nodes {
		for {
			got := participants(t, n, room)
			if fmt.Sprint(got) == fmt.Sprint(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s lists %v, want %v", n.id, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// roomOwner is the lease on a room as the engine holds it (read through node n), once it has a
// holder at an epoch other than notEpoch.
func roomOwner(t testing.TB, within time.Duration, room uint64, n *testNode, notEpoch uint64) cluster.Lease {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l, held, err := n.eng.Holder(ctx, fmt.Sprintf("videoroom/%d", room))
		cancel()
		if err == nil && held && l.Epoch != notEpoch {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("room %d: no owner (other than at epoch %d) within %v: %+v %v", room, notEpoch, within, l, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startRogue joins the test's cluster as a bare node with no plugin: what it publishes on the
// rooms' topics is remote input to the others.
func startRogue(t testing.TB, redisAddr, prefix string) *cluster.Node {
	t.Helper()
	eng, err := redisengine.New(redisengine.Options{Address: redisAddr, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	n, err := cluster.New(cluster.Config{NodeID: "rogue", Secret: "test-secret", Heartbeat: testHeartbeat,
		NodeTTL: testNodeTTL, LeaseTTL: testNodeTTL}, eng, cluster.WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = n.Stop(ctx)
		_ = eng.Close()
	})
	return n
}
