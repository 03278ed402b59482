package proxytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/transport"
	"github.com/strata-rtc/strata/internal/transport/wsapi"
)

// A session created on node 1 is claimed and used over a WebSocket to node 2, with node 1's events
// relayed to the client, then claimed through node 3, whose client gets the events from then on.
// Every upstream closes with its client.
func TestWSSessionServedThroughAnotherNode(t *testing.T) {
	table := NewTable()
	n1, n2, n3 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2), startNode(t, table, "n3", 3)
	sid := n1.create()

	c2 := n2.dial()
	if m := c2.do("cl", `{"janus":"claim","transaction":"cl","session_id":%d}`, sid); m.janus() != "success" {
		t.Fatalf("claim through n2: %v", m)
	}
	m := c2.do("a", `{"janus":"attach","transaction":"a","session_id":%d,"plugin":"%s"}`, sid, gatewaytest.EchoPackage)
	if m.janus() != "success" {
		t.Fatalf("attach: %v", m)
	}
	hid := m.id()
	if m := c2.do("m1", `{"janus":"message","transaction":"m1","session_id":%d,"handle_id":%d,"body":{"request":"sync"}}`, sid, hid); m.janus() != "success" {
		t.Fatalf("sync message: %v", m)
	}
	c2.doAsync("m2", `{"janus":"message","transaction":"m2","session_id":%d,"handle_id":%d,"body":{"request":"later"}}`, sid, hid)
	if m := c2.do("t", `{"janus":"trickle","transaction":"t","session_id":%d,"handle_id":%d,"candidate":{"completed":true}}`, sid, hid); m.janus() != "ack" {
		t.Fatalf("trickle: %v", m)
	}
	if m := c2.do("k", `{"janus":"keepalive","transaction":"k","session_id":%d}`, sid); m.janus() != "ack" {
		t.Fatalf("keepalive: %v", m)
	}
	if m := c2.do("p", `{"janus":"ping","transaction":"p"}`); m.janus() != "pong" {
		t.Fatalf("a request of node 2's own: %v", m)
	}
	if n1.wsh.Conns() != 1 {
		t.Fatalf("node 1 has %d WebSocket connections, want node 2's upstream", n1.wsh.Conns())
	}

	c3 := n3.dial()
	if m := c3.do("cl3", `{"janus":"claim","transaction":"cl3","session_id":%d}`, sid); m.janus() != "success" {
		t.Fatalf("claim through n3: %v", m)
	}
	// A request that still comes through node 2 is answered there; its event goes where the session is now.
	if m := c2.do("m3", `{"janus":"message","transaction":"m3","session_id":%d,"handle_id":%d,"body":{"request":"later"}}`, sid, hid); m.janus() != "ack" {
		t.Fatalf("message through n2 after the claim: %v", m)
	}
	if m := c3.read(); m.janus() != "event" || m["transaction"] != "m3" {
		t.Fatalf("the event after the claim through n3: %v", m)
	}
	if m := c3.do("d", `{"janus":"destroy","transaction":"d","session_id":%d}`, sid); m.janus() != "success" {
		t.Fatalf("destroy through n3: %v", m)
	}
	if n1.gw.HasSession(sid) {
		t.Fatal("the session outlived its destroy")
	}
	c3.ws.Close()
	eventually(t, "node 3's upstream closes with its client", func() bool { return n1.wsh.Conns() == 1 })
	c2.ws.Close()
	eventually(t, "node 2's upstream closes with its client", func() bool { return n1.wsh.Conns() == 0 })
}

// A node that does not answer, or drops the connection with requests pending, gives the client a
// Janus error for each, naming the node; the next request dials again.
func TestWSUpstreamFailure(t *testing.T) {
	table := NewTable()
	n2 := startNode(t, table, "n2", 2)
	var dials atomic.Int32
	up := websocket.Upgrader{Subprotocols: []string{wsapi.Subprotocol}}
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		dials.Add(1)
		_, _, _ = ws.ReadMessage() // takes one request and drops the connection
		ws.Close()
	}))
	t.Cleanup(broken.Close)
	table.Put(cluster.NodeRecord{ID: "n9", Slot: 9, WS: "ws" + strings.TrimPrefix(broken.URL, "http")})
	sid := cluster.WithSlot(42, 9)

	c := n2.dial()
	for _, tx := range []string{"k1", "k2"} {
		m := c.do(tx, `{"janus":"keepalive","transaction":"%s","session_id":%d}`, tx, sid)
		if m.code() != int(janus.ErrTransportSpecific) || !strings.Contains(m.reason(), "node n9") {
			t.Fatalf("%s to a node that drops the connection: %v", tx, m)
		}
	}
	if dials.Load() != 2 {
		t.Fatalf("%d upstream connections, want one per failed request", dials.Load())
	}
	broken.Close()
	if m := c.do("k3", `{"janus":"keepalive","transaction":"k3","session_id":%d}`, sid); !strings.Contains(m.reason(), "node n9") {
		t.Fatalf("a node that cannot be reached: %v", m)
	}
	table.Remove(9)
	if m := c.do("k4", `{"janus":"keepalive","transaction":"k4","session_id":%d}`, sid); m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("a session of a node that left: %v", m)
	}
	if m := c.do("p", `{"janus":"ping","transaction":"p"}`); m.janus() != "pong" {
		t.Fatalf("the client's connection after the failures: %v", m)
	}
}

// The holding node's errors come back unchanged; a connection opened by another node never
// forwards (the loop guard); ids of a slot nobody holds are this node's 458.
func TestWSBadInputAndLoopGuard(t *testing.T) {
	table := NewTable()
	n1, n2 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2)
	sid := n1.create()
	direct, via := n1.dial(), n2.dial()
	for _, req := range []string{
		`{"janus":"message","transaction":"x","session_id":%d,"handle_id":1,"body":"not an object"}`,
		`{"janus":"fly","transaction":"x","session_id":%d}`,
		`{"janus":"attach","transaction":"x","session_id":%d,"plugin":7}`,
	} {
		want, got := direct.do("x", req, sid), via.do("x", req, sid)
		if got.code() == 0 || got.code() != want.code() || got.reason() != want.reason() {
			t.Fatalf("%s: through n2 %v, on n1 %v", req, got, want)
		}
	}
	if m := via.do("k", `{"janus":"keepalive","transaction":"k","session_id":%d}`, cluster.WithSlot(42, 9)); m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("a slot nobody holds: %v", m)
	}
	d := websocket.Dialer{Subprotocols: []string{wsapi.Subprotocol}}
	ws, _, err := d.Dial(n2.rec.WS, http.Header{transport.ProxiedHeader: {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	guarded := &wsClient{t: t, ws: ws}
	if m := guarded.do("k", `{"janus":"keepalive","transaction":"k","session_id":%d}`, sid); m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("a connection from another node forwarded again: %v", m)
	}
}

// A node that takes no new sessions refuses new WebSocket connections with 503 (janus.js then tries
// its next server); open connections and other nodes' upstreams are served, but create is refused.
func TestWSRefusedWhileNotAccepting(t *testing.T) {
	table := NewTable()
	n1, n2 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2)
	sid := n2.create()
	open := n2.dial()
	table.Refuse(2, "full")
	_, resp, err := dialWS(n2.rec.WS)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new connection to a full node: %v %v", err, resp)
	}
	if m := open.do("c", `{"janus":"create","transaction":"c"}`); m.code() != int(janus.ErrNotAcceptingSessions) || !strings.Contains(m.reason(), "full") {
		t.Fatalf("create on an open connection: %v", m)
	}
	if m := open.do("k", `{"janus":"keepalive","transaction":"k","session_id":%d}`, sid); m.janus() != "ack" {
		t.Fatalf("keepalive on an open connection: %v", m)
	}
	if m := n1.dial().do("k", `{"janus":"keepalive","transaction":"k","session_id":%d}`, sid); m.janus() != "ack" {
		t.Fatalf("keepalive through node 1: %v", m)
	}
	// The admin API's accept_new_sessions off is the same as far as clients can tell.
	table.Refuse(2, "")
	admin := `{"janus":"accept_new_sessions","transaction":"a","accept":false,"admin_secret":"s"}`
	if m := n2.gw.Admin(context.Background(), []byte(admin), gateway.Origin{}); m.Janus != "success" {
		t.Fatalf("accept_new_sessions: %s", janus.Encode(m))
	}
	if _, resp, err := dialWS(n2.rec.WS); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new connection with accept_new_sessions off: %v %v", err, resp)
	}
}
