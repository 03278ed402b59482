// Package clustertest runs strata cluster nodes inside one test process: each with its own
// engine connection to the test's redis-server (redistest), its own cluster listener, Node and
// media relay on loopback, as separate processes would have, and a crash that cuts one off as
// kill -9 would, seen from the others.
package clustertest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// Timing of the test clusters: a node is gone 600 ms after its last heartbeat, a lease lapses as
// soon, a relay link that hears nothing for a second is down.
const (
	Heartbeat     = 100 * time.Millisecond
	NodeTTL       = 600 * time.Millisecond
	LinkFailed    = time.Second
	secret        = "test-secret"
	connectBudget = 5 * time.Second
)

// Node is one cluster node of a test.
type Node struct {
	ID    string
	Eng   *redisengine.Engine
	Node  *cluster.Node
	Relay *relay.Relay // nil when started WithoutRelay

	intl *httptest.Server
	dead atomic.Bool
	once sync.Once
}

// deadTransport fails the node-to-node requests of a crashed node.
type deadTransport struct{ n *Node }

func (d deadTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.n.dead.Load() {
		return nil, errors.New("clustertest: node crashed")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Option changes how Start runs a node.
type Option func(*options)

type options struct {
	noRelay        bool
	relayTransport string
}

// WithoutRelay starts the node with no media relay: for tests of what crosses nodes other than
// media, and for a bare node that only publishes on the cluster's topics.
func WithoutRelay() Option { return func(o *options) { o.noRelay = true } }

// WithRelayTransport sets the relay's transport (relay.Config.Transport: "srtp" or "rtp").
func WithRelayTransport(transport string) Option {
	return func(o *options) { o.relayTransport = transport }
}

// Start runs node id of the cluster whose keys have prefix in the redis-server at redisAddr;
// it stops when the test ends (a clean stop, unless it crashed first).
func Start(t testing.TB, redisAddr, prefix, id string, log *slog.Logger, opts ...Option) *Node {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("node", id)
	n := &Node{ID: id}
	eng, err := redisengine.New(redisengine.Options{Address: redisAddr, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	n.Eng = eng
	var handler atomic.Pointer[http.Handler]
	n.intl = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := handler.Load()
		if n.dead.Load() || h == nil {
			http.Error(w, "node down", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	}))
	n.Node, err = cluster.New(cluster.Config{NodeID: id, Internal: n.intl.URL, Secret: secret, Heartbeat: Heartbeat,
		NodeTTL: NodeTTL, LeaseTTL: NodeTTL}, eng, cluster.WithLogger(log),
		cluster.WithHTTPClient(&http.Client{Transport: deadTransport{n}}))
	if err != nil {
		n.intl.Close()
		_ = eng.Close()
		t.Fatal(err)
	}
	h := n.Node.Handler()
	handler.Store(&h)
	t.Cleanup(n.Close)
	if o.noRelay {
		return n
	}
	n.Relay, err = relay.New(relay.Config{NodeID: id, Address: "127.0.0.1", FailedTimeout: LinkFailed,
		ConnectTimeout: connectBudget, Transport: o.relayTransport, Log: log}, n.Node)
	if err != nil {
		t.Fatal(err)
	}
	// As a server wires them: a node the membership declares gone takes its links down at once.
	stopWatch := n.Node.Watch(func(ev cluster.NodeEvent) {
		if ev.Kind == cluster.NodeGone {
			go n.Relay.PeerGone(ev.Node.ID)
		}
	})
	t.Cleanup(stopWatch)
	return n
}

// Close stops the node cleanly (its record deleted at once); after Crash it only frees what the
// node still holds in this process.
func (n *Node) Close() {
	n.once.Do(func() {
		if n.Relay != nil {
			n.Relay.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = n.Node.Stop(ctx) // after a crash: ends its goroutines (the engine calls fail)
		n.intl.Close()
		_ = n.Eng.Close()
	})
}

// Crash cuts the node off as a kill -9 would, seen from the others: it answers no node and
// reaches none, its record and leases, no longer refreshed, lapse after NodeTTL, and its media
// relay (if it has one) stops sending.
func (n *Node) Crash() {
	n.dead.Store(true)
	_ = n.Eng.Close()
	if n.Relay != nil {
		n.Relay.Close()
	}
}
