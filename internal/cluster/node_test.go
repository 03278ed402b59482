package cluster_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
)

// Short periods: a node is gone 400 ms after its last heartbeat.
const (
	heartbeat = 100 * time.Millisecond
	nodeTTL   = 400 * time.Millisecond
	leaseTTL  = 400 * time.Millisecond
	secret    = "s3cret"
)

// startNode runs a Node with its own engine (as a separate process would) and cluster listener.
func startNode(t *testing.T, redisAddr, id string, mod ...func(*cluster.Config)) *cluster.Node {
	t.Helper()
	eng, err := redisengine.New(redisengine.Options{Address: redisAddr, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var handler syncHandler
	srv := httptest.NewServer(&handler)
	cfg := cluster.Config{NodeID: id, Internal: srv.URL, API: "http://" + id + "/janus", WS: "ws://" + id,
		Secret: secret, Heartbeat: heartbeat, NodeTTL: nodeTTL, LeaseTTL: leaseTTL}
	for _, m := range mod {
		m(&cfg)
	}
	n, err := cluster.New(cfg, eng)
	if err != nil {
		t.Fatal(err)
	}
	handler.set(n.Handler())
	t.Cleanup(func() {
		_ = n.Stop(context.Background())
		srv.Close()
		_ = eng.Close()
	})
	return n
}

// syncHandler serves through the node's Handler once the node exists (its listener's URL is in
// its config, so the listener comes first).
type syncHandler struct {
	mu sync.Mutex
	h  http.Handler
}

func (s *syncHandler) set(h http.Handler) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func (s *syncHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	if h == nil {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

// waitFor polls cond every 10 ms until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// events collects a Watch's events.
type events struct {
	mu sync.Mutex
	ev []cluster.NodeEvent
}

func (e *events) add(ev cluster.NodeEvent) {
	e.mu.Lock()
	e.ev = append(e.ev, ev)
	e.mu.Unlock()
}

func (e *events) has(kind cluster.NodeEventKind, id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.ev {
		if ev.Kind == kind && ev.Node.ID == id {
			return true
		}
	}
	return false
}
