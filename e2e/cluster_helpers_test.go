package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/clusterrig"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/rig"
)

// The cluster tests (TestCluster*) run alone in make test's cluster step: the rig's bridge is an
// interface that comes and goes in this namespace, which would disturb the other tests' browsers.

const clusterRoom = 1234 // in every node's configuration (the reference configuration's demo room)

// startCluster builds strata and starts a cluster of n nodes over a real redis-server; every
// node's log is printed if the test fails.
func startCluster(t *testing.T, n int, extra string) *clusterrig.Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the cluster tests build network namespaces: run them as root")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/strata-rtc/strata/cmd/strata").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/strata: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := clusterrig.Start(ctx, clusterrig.Options{Nodes: n, Bin: bin, Dir: dir, Extra: extra})
	if err != nil {
		t.Fatalf("starting a cluster of %d nodes: %v", n, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logClusterStatus(t, c)
		}
		c.Close()
		if t.Failed() {
			for _, node := range c.Nodes {
				t.Logf("%s log:\n%s", node.ID, rig.Tail(node.Log()))
			}
		}
	})
	return c
}

// clusterEnv is the load client's environment for node i's HTTP (or WebSocket) API.
func clusterEnv(t *testing.T, c *clusterrig.Cluster, i int, ws bool) *client.Env {
	t.Helper()
	m, err := mediasrc.Load(mediasrc.DefaultDir(), mediasrc.Layers)
	if err != nil {
		t.Fatal(err)
	}
	server := c.Nodes[i].API()
	if ws {
		server = c.Nodes[i].WS()
	}
	env, err := client.NewEnv(client.Config{
		Server: server, Room: clusterRoom, Media: m, Substream: -1, JoinTimeout: 20 * time.Second,
		ICEInterfaces: []string{c.Bridge},
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// observer is a participant without media on one node: what the room's events look like there.
type observer struct {
	t    *testing.T
	node string
	c    *janusclient.Client
	h    *janusclient.Handle

	mu     sync.Mutex
	events []map[string]any
}

func newObserver(t *testing.T, ctx context.Context, node *clusterrig.Node) *observer {
	t.Helper()
	c, err := janusclient.Dial(ctx, node.API())
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(ctx)
	if err != nil {
		t.Fatalf("%s: create: %v", node.ID, err)
	}
	h, err := s.Attach(ctx, client.Plugin)
	if err != nil {
		t.Fatalf("%s: attach: %v", node.ID, err)
	}
	o := &observer{t: t, node: node.ID, c: c, h: h}
	go o.collect()
	ev, err := h.Message(ctx, map[string]any{"request": "join", "ptype": "publisher", "room": clusterRoom,
		"display": "observer on " + node.ID}, nil)
	if err != nil {
		t.Fatalf("%s: observer join: %v", node.ID, err)
	}
	o.add(ev)
	t.Cleanup(func() { _ = c.Close() })
	return o
}

func (o *observer) collect() {
	for ev := range o.h.Events() {
		o.add(ev)
	}
}

func (o *observer) add(ev *janusclient.Event) {
	if ev == nil || ev.PluginData == nil {
		return
	}
	var data map[string]any
	if json.Unmarshal(ev.PluginData.Data, &data) != nil {
		return
	}
	o.mu.Lock()
	o.events = append(o.events, data)
	o.mu.Unlock()
}

// published lists the feeds the observer was told about in joined/publishers events, in order,
// without those it was told went (unpublished, leaving).
func (o *observer) published() []uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []uint64
	for _, ev := range o.events {
		if ps, ok := ev["publishers"].([]any); ok {
			for _, p := range ps {
				if id := feedID(p.(map[string]any)["id"]); id != 0 && !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		}
		for _, key := range []string{"unpublished", "leaving"} {
			if id := feedID(ev[key]); id != 0 {
				out = slices.DeleteFunc(out, func(x uint64) bool { return x == id })
			}
		}
	}
	return out
}

func feedID(v any) uint64 {
	if f, ok := v.(float64); ok {
		return uint64(f)
	}
	return 0
}

// waitPublished waits until the observer's view of the published feeds is want (in any order).
func (o *observer) waitPublished(want []uint64, within time.Duration) {
	o.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := o.published()
		if sameSet(got, want) {
			return
		}
		if time.Now().After(deadline) {
			o.mu.Lock()
			evs, _ := json.Marshal(o.events)
			o.mu.Unlock()
			o.t.Fatalf("%s: publishers seen %v, want %v within %v; the observer's events: %s", o.node, got, want, within, evs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sameSet(a, b []uint64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// listParticipants is the room's participants as node i lists them.
func listParticipants(ctx context.Context, node *clusterrig.Node) ([]uint64, error) {
	c, err := janusclient.Dial(ctx, node.API())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := c.Create(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Destroy(ctx) }()
	h, err := s.Attach(ctx, client.Plugin)
	if err != nil {
		return nil, err
	}
	ev, err := h.Message(ctx, map[string]any{"request": "listparticipants", "room": clusterRoom}, nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		Participants []struct {
			ID        uint64 `json:"id"`
			Publisher bool   `json:"publisher"`
		} `json:"participants"`
	}
	if err := ev.DecodeData(&r); err != nil {
		return nil, err
	}
	var ids []uint64
	for _, p := range r.Participants {
		if p.Publisher {
			ids = append(ids, p.ID)
		}
	}
	return ids, nil
}

// requireMedia waits until every stream of sub received media after since.
func requireMedia(t *testing.T, env *client.Env, sub *client.Subscriber, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		streams := sub.Streams()
		flowing := 0
		for _, st := range streams {
			if s := st.Summarize(env.Now()); s.Frames > 0 {
				flowing++
			}
		}
		if len(streams) >= want && flowing >= want {
			return
		}
		if time.Now().After(deadline) {
			for _, st := range streams {
				t.Logf("feed %d %s: %+v", st.Feed, st.Kind, st.Summarize(env.Now()))
			}
			t.Fatalf("%d of %d streams received media within %v", flowing, want, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaseHolder reads the lease on name from Redis itself.
func leaseHolder(t *testing.T, c *clusterrig.Cluster, name string) cluster.Lease {
	t.Helper()
	out, err := exec.Command("redis-cli", "-h", c.HostIP, "-p", fmt.Sprint(clusterrig.RedisPort),
		"hgetall", "strata:lease:"+name).Output()
	if err != nil {
		t.Fatalf("redis-cli hgetall: %v", err)
	}
	f := strings.Fields(string(out))
	l := cluster.Lease{Name: name}
	for i := 0; i+1 < len(f); i += 2 {
		switch f[i] {
		case "holder":
			l.Holder = f[i+1]
		case "epoch":
			l.Epoch, _ = strconv.ParseUint(f[i+1], 10, 64)
		}
	}
	return l
}

// waitLease waits until name is held at an epoch above after.
func waitLease(t *testing.T, c *clusterrig.Cluster, name string, after uint64, within time.Duration) cluster.Lease {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l := leaseHolder(t, c, name)
		if l.Holder != "" && l.Epoch > after {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no holder above epoch %d within %v (now %+v)", name, after, within, l)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createStatus is the HTTP status of a create on node.
func createStatus(t *testing.T, node *clusterrig.Node) int {
	t.Helper()
	resp, err := http.Post(node.API(), "application/json", strings.NewReader(`{"janus":"create","transaction":"c"}`))
	if err != nil {
		t.Fatalf("create on %s: %v", node.ID, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// postJSON posts body to url and decodes the reply into out.
func postJSON(t *testing.T, url, body string, out any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: HTTP %d, reply not JSON: %v", url, resp.StatusCode, err)
	}
}

// logClusterStatus logs every live node's view of the cluster (admin API `cluster`).
func logClusterStatus(t *testing.T, c *clusterrig.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, args := range [][]string{{"keys", "*"}, {"smembers", "strata:nodes"}} {
		out, err := exec.Command("redis-cli", append([]string{"-h", c.HostIP, "-p", fmt.Sprint(clusterrig.RedisPort)}, args...)...).CombinedOutput()
		t.Logf("redis %v: %s %v", args, strings.Join(strings.Fields(string(out)), " "), err)
	}
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		var reply json.RawMessage
		err := n.AdminRequest(ctx, map[string]any{"janus": "cluster"}, &reply)
		t.Logf("%s's view of the cluster: %s %v", n.ID, reply, err)
	}
}

// requireAudioPackets waits until the PeerConnection pcExpr received n audio packets.
func requireAudioPackets(t *testing.T, b *browser, pcExpr, what string, n int) {
	t.Helper()
	js := fmt.Sprintf(`(async () => {
		let n = 0;
		(await %s.getStats()).forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio') n = s.packetsReceived; });
		return n;
	})()`, pcExpr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := eval[int](b, js)
		if err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d audio packets received within 10 s, want %d (%v)", what, got, n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// relayPackets reads strata_cluster_relay_packets_total{direction} from node's /metrics.
func relayPackets(t *testing.T, node *clusterrig.Node, direction string) float64 {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(node.Admin(), "/admin") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s /metrics: %v", node.ID, err)
	}
	for _, m := range fams["strata_cluster_relay_packets_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "direction" && l.GetValue() == direction {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("%s /metrics has no strata_cluster_relay_packets_total{direction=%q}", node.ID, direction)
	return 0
}

// clusterStatus is node's admin API `cluster` reply.
func clusterStatus(t *testing.T, node *clusterrig.Node) cluster.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reply struct {
		Cluster cluster.Status `json:"cluster"`
	}
	if err := node.AdminRequest(ctx, map[string]any{"janus": "cluster"}, &reply); err != nil {
		t.Fatalf("%s: admin cluster: %v", node.ID, err)
	}
	return reply.Cluster
}
