package proxytest

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/transport"
)

// A session created on node 1 is used through node 2 over HTTP, long-polls included, exactly as on
// node 1; everything reaches node 1 marked as forwarded, with the client's address.
func TestHTTPSessionServedThroughAnotherNode(t *testing.T) {
	table := NewTable()
	n1, n2 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2)
	sid := n1.create()
	s := fmt.Sprintf("/%d", sid)

	status, m := n2.post(s, `{"janus":"attach","transaction":"a","plugin":"`+gatewaytest.EchoPackage+`"}`)
	if status != http.StatusOK || m.janus() != "success" {
		t.Fatalf("attach through n2: %d %v", status, m)
	}
	hid := m.id()
	h := fmt.Sprintf("%s/%d", s, hid)
	if _, m := n2.post(h, `{"janus":"message","transaction":"m","body":{"request":"sync"}}`); m.janus() != "success" || m["plugindata"] == nil {
		t.Fatalf("sync message: %v", m)
	}
	if _, m := n2.post(h, `{"janus":"message","transaction":"m2","body":{"request":"later"}}`); m.janus() != "ack" {
		t.Fatalf("async message: %v", m)
	}
	status, m = n2.get(s + "?maxev=1")
	if status != http.StatusOK || m.janus() != "event" || m["transaction"] != "m2" {
		t.Fatalf("long-poll through n2: %d %v", status, m)
	}
	if _, m := n2.post(h, `{"janus":"trickle","transaction":"t","candidate":{"completed":true}}`); m.janus() != "ack" {
		t.Fatalf("trickle: %v", m)
	}
	// Hop-by-hop headers stay on the hop they were sent on.
	if _, m := n2.post(s, `{"janus":"keepalive","transaction":"k"}`, "Connection", "X-Hop", "X-Hop", "1"); m.janus() != "ack" {
		t.Fatalf("keepalive: %v", m)
	}
	if _, hdr := n1.seen.forwarded(); hdr.Get("X-Hop") != "" || hdr.Get(transport.ProxiedHeader) == "" {
		t.Fatalf("the keepalive reached node 1 with %v", hdr)
	}
	// A long-poll with nothing to say is held at node 1 and answers keepalive at its timeout.
	if status, m := n2.get(s); status != http.StatusOK || m.janus() != "keepalive" {
		t.Fatalf("idle long-poll: %d %v", status, m)
	}
	if _, m := n2.post(s, `{"janus":"destroy","transaction":"d"}`); m.janus() != "success" {
		t.Fatalf("destroy: %v", m)
	}
	if n1.gw.HasSession(sid) {
		t.Fatal("the session outlived its destroy")
	}
	n, hdr := n1.seen.forwarded()
	if n < 8 || !strings.HasPrefix(hdr.Get("X-Forwarded-For"), "127.0.0.1") {
		t.Fatalf("node 1 saw %d forwarded requests, last X-Forwarded-For %q", n, hdr.Get("X-Forwarded-For"))
	}
	if n, _ := n2.seen.forwarded(); n != 0 {
		t.Fatalf("node 2 got %d requests forwarded to it", n)
	}
}

// A request already forwarded once is never forwarded again: the node answers it itself.
func TestHTTPLoopGuard(t *testing.T) {
	table := NewTable()
	n1, n2 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2)
	sid := n1.create()
	_, m := n2.post(fmt.Sprintf("/%d", sid), `{"janus":"keepalive","transaction":"k"}`, transport.ProxiedHeader, "1")
	if m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("a forwarded request for another node's session: %v", m)
	}
	if n, _ := n1.seen.forwarded(); n != 0 {
		t.Fatalf("forwarded again: node 1 saw %d", n)
	}
}

// What the holding node answers comes back unchanged, errors included; ids of nobody's slot and of
// a node that left are this node's 458, and a node that does not answer is named in the error.
func TestHTTPBadInputAndFailedNodes(t *testing.T) {
	table := NewTable()
	n1, n2 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2)
	sid := n1.create()
	s := fmt.Sprintf("/%d", sid)
	bodies := []string{`{not json`, `[1,2]`, `{"janus":"message","transaction":"x","body":"not an object"}`, `{"janus":"fly","transaction":"x"}`}
	for _, body := range bodies {
		_, direct := n1.post(s+"/1", body)
		status, via := n2.post(s+"/1", body)
		if status != http.StatusOK || via.code() == 0 || via.code() != direct.code() || via.reason() != direct.reason() {
			t.Fatalf("%s: through n2 %d %v, on n1 %v", body, status, via, direct)
		}
	}
	if n, _ := n1.seen.forwarded(); n != len(bodies) {
		t.Fatalf("node 1 got %d of the %d bad requests", n, len(bodies))
	}
	// The holding node's long-poll 404 for a session it does not have passes through as it is.
	if status, m := n2.get(fmt.Sprintf("/%d", cluster.WithSlot(42, 1))); status != http.StatusNotFound || m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("long-poll of an unknown session of node 1: %d %v", status, m)
	}
	if _, m := n2.post(fmt.Sprintf("/%d", cluster.WithSlot(42, 9)), `{"janus":"keepalive","transaction":"k"}`); m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("a slot nobody holds: %v", m)
	}

	// A node whose listener is gone while its record lives on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/janus"
	ln.Close()
	table.Put(cluster.NodeRecord{ID: "n9", Slot: 9, API: dead})
	gone := fmt.Sprintf("/%d", cluster.WithSlot(42, 9))
	status, m := n2.post(gone, `{"janus":"keepalive","transaction":"k9"}`)
	if status != http.StatusOK || m.code() != int(janus.ErrTransportSpecific) || m["transaction"] != "k9" || !strings.Contains(m.reason(), "node n9") {
		t.Fatalf("POST to a failed node: %d %v", status, m)
	}
	if status, m := n2.get(gone); status != http.StatusBadGateway || !strings.Contains(m.reason(), "node n9") {
		t.Fatalf("long-poll to a failed node: %d %v", status, m)
	}
	// Once the node's record lapses, its sessions are simply unknown.
	table.Remove(9)
	if _, m := n2.post(gone, `{"janus":"keepalive","transaction":"k"}`); m.code() != int(janus.ErrSessionNotFound) {
		t.Fatalf("a session of a node that left: %v", m)
	}
}

// A node that takes no new sessions refuses create with HTTP 503, which makes janus.js try its next
// server (a 200 with an error would not); the sessions it holds are served as ever.
func TestHTTPCreateRefusedWith503(t *testing.T) {
	table := NewTable()
	n1, n2 := startNode(t, table, "n1", 1), startNode(t, table, "n2", 2)
	sid := n1.create()
	table.Refuse(1, "draining")
	status, m := n1.post("", `{"janus":"create","transaction":"c"}`)
	if status != http.StatusServiceUnavailable || m.code() != int(janus.ErrNotAcceptingSessions) || !strings.Contains(m.reason(), "draining") {
		t.Fatalf("create on a draining node: %d %v", status, m)
	}
	for _, n := range []*node{n1, n2} {
		if _, m := n.post(fmt.Sprintf("/%d", sid), `{"janus":"keepalive","transaction":"k"}`); m.janus() != "ack" {
			t.Fatalf("keepalive via %s on a draining node: %v", n.rec.ID, m)
		}
	}
	n2.create() // the next server takes it
	table.Refuse(1, "")
	n1.create()
}
