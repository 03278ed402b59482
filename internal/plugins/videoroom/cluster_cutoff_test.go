package videoroom_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

// redisLink is a node's TCP path to Redis, which a test can cut and restore (a node cut off from
// the engine while the rest of the cluster, and its own clients, still reach it).
type redisLink struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func newRedisLink(t *testing.T, target string) *redisLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &redisLink{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); l.setCut(true) })
	go l.serve()
	return l
}

func (l *redisLink) addr() string { return l.ln.Addr().String() }

func (l *redisLink) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		if l.cut {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", l.target)
		if err != nil {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.conns = append(l.conns, c, up)
		l.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

// setCut cuts every connection and refuses new ones (true), or lets them through again.
func (l *redisLink) setCut(cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = cut
	if cut {
		for _, c := range l.conns {
			_ = c.Close()
		}
		l.conns = nil
	}
}

// TestClusterOwnerCutOff: the room's owner loses Redis (not the other nodes, nor its clients).
// It stops acting as owner; for the others it is gone (its participants leave within 5 s) and
// another node owns the room at a higher epoch. When Redis is back the node re-announces its
// participants to the new owner and they are in the room again on every node.
func TestClusterOwnerCutOff(t *testing.T) {
	rs := redistest.Start(t)
	prefix := fmt.Sprintf("vr%d", time.Now().UnixNano())
	links := []*redisLink{newRedisLink(t, rs.Addr()), newRedisLink(t, rs.Addr()), newRedisLink(t, rs.Addr())}
	var nodes []*testNode
	for i, l := range links {
		nodes = append(nodes, startNode(t, l.addr(), prefix, fmt.Sprintf("node%d", i+1), false))
	}
	const room = 1234
	lease := roomOwner(t, 5*time.Second, room, nodes[0], 0)
	var owner *testNode
	var link *redisLink
	var others []*testNode
	for i, n := range nodes {
		if n.id == lease.Holder {
			owner, link = n, links[i]
		} else {
			others = append(others, n)
		}
	}
	a, _ := joinObserver(t, others[0], room, "a")
	onOwner, _ := joinObserver(t, owner, room, "on-owner")
	px := startPublisher(t, owner.c, room, "px")
	a.waitSummary(10*time.Second, fmt.Sprintf("publishers:%d", px.id))

	link.setCut(true)
	cut := time.Now()
	a.waitSummary(5*time.Second, fmt.Sprintf("unpublished:%d", px.id), fmt.Sprintf("leaving:%d", onOwner.id))
	t.Logf("the cut-off owner's participants left the others %v after the cut", time.Since(cut))
	next := roomOwner(t, 5*time.Second, room, others[0], lease.Epoch)
	if next.Holder == owner.id || next.Epoch <= lease.Epoch {
		t.Fatalf("room lease %+v after its owner %+v was cut off", next, lease)
	}
	if owner.node.Connected() {
		t.Fatal("the cut-off node says it reaches the engine")
	}

	link.setCut(false)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(strings.Join(a.summary(), " "), fmt.Sprintf("publishers:%d", px.id)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the node back from its cut did not re-announce its publisher: %v", a.summary())
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitParticipants(t, 5*time.Second, room, map[uint64]bool{a.id: false, onOwner.id: false, px.id: true}, nodes...)
}
