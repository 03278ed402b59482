package relay

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

// clusterNode joins a real cluster (Redis engine, HTTP cluster listener) as node id.
func clusterNode(t *testing.T, redisAddr, id string) *cluster.Node {
	t.Helper()
	eng, err := redisengine.New(redisengine.Options{Address: redisAddr, Prefix: "relaytest"})
	if err != nil {
		t.Fatal(err)
	}
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := handler.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	n, err := cluster.New(cluster.Config{NodeID: id, Internal: srv.URL, API: "http://" + id + "/janus", WS: "ws://" + id,
		Secret: "relay-test-secret", Heartbeat: 100 * time.Millisecond, NodeTTL: 400 * time.Millisecond, LeaseTTL: 400 * time.Millisecond},
		eng, cluster.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	h := n.Handler()
	handler.Store(&h)
	t.Cleanup(func() {
		_ = n.Stop(context.Background())
		srv.Close()
		_ = eng.Close()
	})
	return n
}

// The relay over the cluster's own signalling: node-to-node requests over HTTP between two Nodes
// that found each other through a real redis-server.
func TestRelayOverClusterNodes(t *testing.T) {
	redis := redistest.Start(t)
	na, nb := clusterNode(t, redis.Addr(), "a"), clusterNode(t, redis.Addr(), "b")
	eventually(t, "the nodes seeing each other", wait, func() bool {
		_, ab := na.Node("b")
		_, ba := nb.Node("a")
		return ab && ba
	})
	var rs []*Relay
	for _, n := range []*cluster.Node{na, nb} {
		r, err := New(Config{NodeID: n.Self().ID, Address: "127.0.0.1"}, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		rs = append(rs, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := rs[1].Import(ctx, "a", "nothing"); err == nil || !strings.Contains(err.Error(), "no such feed") {
		t.Fatalf("importing a feed a does not have: %v", err)
	}
	originFeed(t, rs[0], "feed", 3)
	imp := importFeed(t, rs[1], "a", "feed")
	sink := newLayerSink()
	imp.Receivers()["v"].AddSink(sink)
	eventually(t, "every layer over the cluster's link", wait, func() bool {
		return sink.count(0) > 10 && sink.count(1) > 10 && sink.count(2) > 10
	})
	gone := make(chan struct{})
	imp.OnGone(func() { close(gone) })
	rs[0].Unexport("feed")
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("the unexport did not reach the importer")
	}
}
