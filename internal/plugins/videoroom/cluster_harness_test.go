package videoroom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/clustertest"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
	"github.com/strata-rtc/strata/internal/record"
)

// testNode is one strata node of a test cluster in this process: a clustertest node (engine,
// cluster listener, Node, optional relay), a videoroom plugin with the Node as its View, and a
// Janus API (WebSocket) in front of it.
type testNode struct {
	t     testing.TB
	cn    *clustertest.Node
	id    string
	eng   *redisengine.Engine
	node  *cluster.Node
	relay *relay.Relay // nil without media between nodes
	vr    *videoroom.Plugin
	c     *janusclient.Client
}

// startNode starts a node; withRelay gives it a media relay (internal/cluster/relay) on loopback.
func startNode(t testing.TB, redisAddr, prefix, id string, withRelay bool, opts ...clustertest.Option) *testNode {
	t.Helper()
	if !withRelay {
		opts = append(opts, clustertest.WithoutRelay())
	}
	cn := clustertest.Start(t, redisAddr, prefix, id, testLogger(), opts...)
	n := &testNode{t: t, cn: cn, id: id, eng: cn.Eng, node: cn.Node, relay: cn.Relay}
	var rl videoroom.Relay // a nil interface, not a nil *relay.Relay, when there is no relay
	if n.relay != nil {
		rl = n.relay
	}
	log := testLogger().With("node", id)
	n.c = janustest.StartPlugin(t, nil, log, func(cfg *config.Config, _ *peer.Factory) plugin.Plugin {
		n.vr = videoroom.New(cfg.Plugins.VideoRoom, record.SessionOptions{}, log, videoroom.WithCluster(n.node, rl))
		return n.vr
	})
	return n
}

// crash cuts the node off as a kill -9 would (clustertest.Node.Crash).
func (n *testNode) crash() { n.cn.Crash() }

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
	return clustertest.Start(t, redisAddr, prefix, "rogue", testLogger(), clustertest.WithoutRelay()).Node
}
