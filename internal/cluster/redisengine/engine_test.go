package redisengine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

func newEngine(t *testing.T, addr string) *Engine {
	t.Helper()
	e, err := New(Options{Address: addr, Prefix: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func TestLeaseFencing(t *testing.T) {
	srv := redistest.Start(t)
	e := newEngine(t, srv.Addr())
	ctx := context.Background()
	const ttl = 300 * time.Millisecond

	a, ok, err := e.Acquire(ctx, "room", "a", 0, ttl)
	if err != nil || !ok || a.Holder != "a" || a.Epoch != 1 {
		t.Fatalf("a acquires: %+v %v %v", a, ok, err)
	}
	b, ok, err := e.Acquire(ctx, "room", "b", 0, ttl)
	if err != nil || ok || b != a {
		t.Fatalf("b must see a's lease and not get it: %+v %v %v", b, ok, err)
	}
	if h, ok, err := e.Holder(ctx, "room"); err != nil || !ok || h != a {
		t.Fatalf("holder: %+v %v %v", h, ok, err)
	}
	if ok, err := e.Renew(ctx, a, ttl); err != nil || !ok {
		t.Fatalf("a renews: %v %v", ok, err)
	}
	// a stops renewing: the lease lapses and b takes it at the next epoch.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, ok, err = e.Acquire(ctx, "room", "b", 0, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a's lease never lapsed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b.Epoch != 2 || b.Holder != "b" {
		t.Fatalf("b's lease: %+v", b)
	}
	// a, late, can neither renew nor release b's lease.
	if ok, err := e.Renew(ctx, a, ttl); err != nil || ok {
		t.Fatalf("stale a renews: %v %v", ok, err)
	}
	if err := e.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if h, ok, _ := e.Holder(ctx, "room"); !ok || h != b {
		t.Fatalf("a's stale release dropped b's lease: %+v %v", h, ok)
	}
	// Same holder, wrong epoch: refused too.
	if ok, _ := e.Renew(ctx, cluster.Lease{Name: "room", Holder: "b", Epoch: 1}, ttl); ok {
		t.Fatal("renew at a stale epoch succeeded")
	}
	if err := e.Release(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.Holder(ctx, "room"); ok {
		t.Fatal("released lease still held")
	}
	c, ok, err := e.Acquire(ctx, "room", "c", 0, ttl)
	if err != nil || !ok || c.Epoch != 3 {
		t.Fatalf("after release: %+v %v %v", c, ok, err)
	}

	// A restarted Redis forgot every epoch: minEpoch (the largest the nodes saw) keeps them growing.
	srv.Restart()
	waitUp(t, e)
	d, ok, err := e.Acquire(ctx, "room", "d", c.Epoch, ttl)
	if err != nil || !ok || d.Epoch != c.Epoch+1 {
		t.Fatalf("after restart: %+v %v %v", d, ok, err)
	}
}

func waitUp(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis did not come back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSlotsUnique(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	e1, e2 := newEngine(t, srv.Addr()), newEngine(t, srv.Addr())
	seen := map[int]string{}
	for i, e := range []*Engine{e1, e2, e1} {
		node := []string{"n1", "n2", "n3"}[i]
		n, err := e.ClaimSlot(ctx, node, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := seen[n]; dup {
			t.Fatalf("slot %d given to %s and %s", n, other, node)
		}
		seen[n] = node
		// Claiming again keeps the slot.
		if again, err := e.ClaimSlot(ctx, node, time.Minute); err != nil || again != n {
			t.Fatalf("%s claims again: %d %v (had %d)", node, again, err, n)
		}
	}
	n1 := e1.lastSlot["n1"]
	if err := e2.RenewSlot(ctx, "n2", n1, time.Minute); err == nil {
		t.Fatal("n2 renewed n1's slot")
	}
	// A restarted Redis forgot the slots: each node gets its own back, whatever the order.
	srv.Restart()
	waitUp(t, e1)
	for _, node := range []string{"n3", "n2", "n1"} {
		e := e1
		if node == "n2" {
			e = e2
		}
		var want int
		for s, id := range seen {
			if id == node {
				want = s
			}
		}
		if got, err := e.ClaimSlot(ctx, node, time.Minute); err != nil || got != want {
			t.Fatalf("%s after restart: slot %d %v, want %d", node, got, err, want)
		}
	}
	// Every slot taken: a clear error.
	for i := 0; i < cluster.MaxSlot; i++ {
		_, _ = e1.ClaimSlot(ctx, "filler"+string(rune('a'+i%26))+string(rune('a'+i/26)), time.Minute)
	}
	if _, err := e2.ClaimSlot(ctx, "late", time.Minute); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("full: %v", err)
	}
}

func TestNodeRecordsLapse(t *testing.T) {
	srv := redistest.Start(t)
	e := newEngine(t, srv.Addr())
	ctx := context.Background()
	if err := e.PutNode(ctx, cluster.NodeRecord{ID: "short", Slot: 1}, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.PutNode(ctx, cluster.NodeRecord{ID: "long", Slot: 2, State: cluster.Serving}, time.Minute); err != nil {
		t.Fatal(err)
	}
	nodes, err := e.Nodes(ctx)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes: %+v %v", nodes, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(nodes) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("short record did not lapse: %+v", nodes)
		}
		time.Sleep(50 * time.Millisecond)
		nodes, _ = e.Nodes(ctx)
	}
	if nodes[0].ID != "long" || nodes[0].Slot != 2 || nodes[0].State != cluster.Serving {
		t.Fatalf("remaining: %+v", nodes[0])
	}
	// A garbage record under the prefix is skipped, not fatal.
	if err := e.client.Set(ctx, e.key("node", "junk"), "{not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	e.client.SAdd(ctx, e.key("nodes"), "junk")
	if nodes, err := e.Nodes(ctx); err != nil || len(nodes) != 1 {
		t.Fatalf("with junk: %+v %v", nodes, err)
	}
	if err := e.DeleteNode(ctx, "long"); err != nil {
		t.Fatal(err)
	}
	if nodes, _ := e.Nodes(ctx); len(nodes) != 0 {
		t.Fatalf("after delete: %+v", nodes)
	}
}

func TestValuesAndUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	e := newEngine(t, srv.Addr())
	ctx := context.Background()
	if err := e.Put(ctx, "feed/1", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := e.Get(ctx, "feed/1"); err != nil || !ok || string(v) != "x" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if err := e.Delete(ctx, "feed/1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.Get(ctx, "feed/1"); err != nil || ok {
		t.Fatalf("deleted: %v %v", ok, err)
	}
	srv.Stop()
	start := time.Now()
	_, _, err := e.Acquire(ctx, "room", "a", 0, time.Second)
	if !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("stopped server: %v", err)
	}
	for _, err := range []error{e.Ping(ctx), e.PutNode(ctx, cluster.NodeRecord{ID: "x"}, time.Second),
		e.Publish(ctx, "c", nil)} {
		if !errors.Is(err, cluster.ErrUnavailable) {
			t.Fatalf("stopped server: %v", err)
		}
	}
	if _, err := e.Subscribe(ctx, "c"); !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("subscribe on a stopped server: %v", err)
	}
	// A functional bound, generous: requests fail fast instead of hanging on a dead server.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing requests took %v", d)
	}
}

func TestSubscribeReconnected(t *testing.T) {
	srv := redistest.Start(t)
	e := newEngine(t, srv.Addr())
	ctx := context.Background()
	sub, err := e.Subscribe(ctx, "topic:a", "topic:b")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := e.Publish(ctx, "topic:b", []byte("one")); err != nil {
		t.Fatal(err)
	}
	recv := func() cluster.Message {
		t.Helper()
		select {
		case m := <-sub.Messages():
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no message")
		}
		return cluster.Message{}
	}
	if m := recv(); m.Channel != "topic:b" || string(m.Payload) != "one" {
		t.Fatalf("got %+v", m)
	}
	select {
	case <-sub.Reconnected():
		t.Fatal("reconnected before any reconnection")
	default:
	}
	srv.Restart()
	select {
	case <-sub.Reconnected():
	case <-time.After(10 * time.Second):
		t.Fatal("no Reconnected after a Redis restart")
	}
	if err := e.Publish(ctx, "topic:a", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if m := recv(); m.Channel != "topic:a" || string(m.Payload) != "two" {
		t.Fatalf("after reconnect got %+v", m)
	}
}

func TestSubscriptionAddRemove(t *testing.T) {
	srv := redistest.Start(t)
	e := newEngine(t, srv.Addr())
	ctx := context.Background()
	sub, err := e.Subscribe(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Add(ctx, "b", "c"); err != nil {
		t.Fatal(err)
	}
	if err := sub.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := sub.Remove(ctx); err != nil { // nothing: not "every channel"
		t.Fatal(err)
	}
	// Adding a channel again after removing it is no reconnection either.
	if err := sub.Remove(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if err := sub.Add(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"a", "b", "c"} {
		if err := e.Publish(ctx, ch, []byte(ch)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(got) < 2 {
		select {
		case m := <-sub.Messages():
			got = append(got, m.Channel)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %v", got)
		}
	}
	if got[0] != "b" || got[1] != "c" {
		t.Fatalf("got %v, want b and c (a was removed)", got)
	}
	select {
	case <-sub.Reconnected():
		t.Fatal("Reconnected without a reconnection")
	case m := <-sub.Messages():
		t.Fatalf("unexpected %+v", m)
	case <-time.After(100 * time.Millisecond):
	}
	n, err := e.client.PubSubNumSub(ctx, "test:a", "test:b").Result()
	if err != nil || n["test:a"] != 0 || n["test:b"] != 1 {
		t.Fatalf("numsub: %v %v", n, err)
	}
}
