package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redisengine"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

// received collects what a topic subscriber got.
type received struct {
	mu   sync.Mutex
	envs []cluster.Envelope
	gaps []string
}

func (r *received) env(e cluster.Envelope) { r.mu.Lock(); r.envs = append(r.envs, e); r.mu.Unlock() }
func (r *received) gap(from string)        { r.mu.Lock(); r.gaps = append(r.gaps, from); r.mu.Unlock() }
func (r *received) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.envs), len(r.gaps)
}

func (r *received) kind(k string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.envs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// subscribed waits until sub receives: a subscription is live only once Redis confirmed it.
func subscribed(t *testing.T, pub cluster.Topic, r *received) {
	t.Helper()
	waitFor(t, 2*time.Second, "subscription live", func() bool {
		_ = pub.Publish(context.Background(), "hello", 0, nil)
		n, _ := r.counts()
		return n > 0
	})
}

func TestTopicOrderAndGaps(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	n2 := startNode(t, srv.Addr(), "n2")
	var got received
	cancel := n2.Topic("room/7").Subscribe(got.env, got.gap)
	defer cancel()
	var own received
	defer n1.Topic("room/7").Subscribe(own.env, own.gap)()
	pub := n1.Topic("room/7")
	subscribed(t, pub, &got)
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		if err := pub.Publish(ctx, "event", 3, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 2*time.Second, "50 events", func() bool { return got.kind("event") == 50 })
	got.mu.Lock()
	envs := got.envs[len(got.envs)-50:]
	for i, e := range envs {
		var body struct{ I int }
		_ = json.Unmarshal(e.Body, &body)
		if e.From != "n1" || e.Topic != "room/7" || e.Kind != "event" || e.Epoch != 3 || body.I != i ||
			e.Seq != envs[0].Seq+uint64(i) {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	// The epoch went from 0 (hello) to 3: one gap, for n1.
	if len(got.gaps) != 1 || got.gaps[0] != "n1" {
		t.Fatalf("gaps: %v", got.gaps)
	}
	got.gaps = nil
	got.mu.Unlock()
	if n, g := own.counts(); n != 0 || g != 0 {
		t.Fatalf("n1 got its own events: %d, %d gaps", n, g)
	}

	// A lost message (another envelope of n1's, numbered past the next, published raw): a gap.
	raw := rawPublisher(t, srv.Addr())
	last := envs[len(envs)-1]
	lost, _ := json.Marshal(cluster.Envelope{Topic: "room/7", From: "n1", Epoch: 3, Seq: last.Seq + 2, Kind: "event"})
	if err := raw.Publish(ctx, "topic:room/7", lost); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "gap on a lost message", func() bool { _, g := got.counts(); return g == 1 })
	// A duplicate (an old number) is dropped.
	if err := raw.Publish(ctx, "topic:room/7", lost); err != nil {
		t.Fatal(err)
	}

	// Redis restarts: the subscriber hears of a gap for every sender, then events flow again.
	srv.Restart()
	waitFor(t, 10*time.Second, "gap after the restart", func() bool {
		got.mu.Lock()
		defer got.mu.Unlock()
		return len(got.gaps) == 2 && got.gaps[1] == "n1"
	})
	before, _ := got.counts()
	waitFor(t, 5*time.Second, "events after the restart", func() bool {
		_ = pub.Publish(ctx, "event", 3, nil)
		n, _ := got.counts()
		return n > before
	})
	got.mu.Lock()
	for i := before + 1; i < len(got.envs); i++ {
		if got.envs[i].Seq != got.envs[i-1].Seq+1 {
			t.Errorf("out of order after the restart: %d then %d", got.envs[i-1].Seq, got.envs[i].Seq)
		}
	}
	got.mu.Unlock()
	if n2.Stats().TopicGaps < 3 {
		t.Fatalf("gaps counted: %+v", n2.Stats())
	}
}

func TestTopicMalformedDropped(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	n2 := startNode(t, srv.Addr(), "n2")
	var got received
	defer n2.Topic("room/9").Subscribe(got.env, got.gap)()
	pub := n1.Topic("room/9")
	subscribed(t, pub, &got)
	raw := rawPublisher(t, srv.Addr())
	ctx := context.Background()
	bad := []string{
		"", "not json", "{", `{"topic":"room/9"}`, `{"topic":"room/8","from":"x","seq":1,"kind":"k"}`,
		`{"topic":"room/9","from":"x","seq":0,"kind":"k"}`, `{"topic":"room/9","from":"","seq":1,"kind":"k"}`,
		`{"topic":"room/9","from":"x","seq":-1,"kind":"k"}`, `[1,2,3]`, `{"topic":"room/9","from":"x","seq":1}`,
		string(make([]byte, cluster.MaxEnvelope+1)),
	}
	for i, b := range bad {
		if err := raw.Publish(ctx, "topic:room/9", []byte(b)); err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(ctx, "good", 0, i); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 2*time.Second, "every good event", func() bool { return got.kind("good") == len(bad) })
	waitFor(t, 2*time.Second, "every bad one counted", func() bool { return n2.Stats().Malformed == int64(len(bad)) })
	if _, g := got.counts(); g != 0 {
		t.Fatalf("%d gaps from malformed messages", g)
	}
}

// rawPublisher is an engine of the same cluster that publishes whatever it is given.
func rawPublisher(t *testing.T, addr string) *redisengine.Engine {
	t.Helper()
	e, err := redisengine.New(redisengine.Options{Address: addr, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func TestCutOffAndBack(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1", func(c *cluster.Config) { c.MaxSessions = 0 })
	own := n1.Owner("room/3", true)
	waitFor(t, time.Second, "n1 owns the room", func() bool { _, mine := own.Current(); return mine })
	before, _ := own.Current()
	slot := n1.Self().Slot
	lost := make(chan bool, 16)
	own.OnChange(func(_ cluster.Lease, mine bool) { lost <- mine })
	<-lost // the current state, at once

	srv.Stop()
	waitFor(t, nodeTTL+10*heartbeat, "n1 cut off", func() bool { return !n1.Connected() })
	if _, mine := own.Current(); mine {
		t.Fatal("a cut-off node still owns the room")
	}
	if ok, why := n1.Accepting(); ok || why == "" {
		t.Fatalf("a cut-off node accepts sessions: %v %q", ok, why)
	}
	waitFor(t, 2*time.Second, "OnChange says not mine", func() bool {
		select {
		case mine := <-lost:
			return !mine
		default:
			return false
		}
	})

	// Redis comes back empty: n1 writes its record and slot again and owns the room again, at a
	// larger epoch than before.
	srv.Start()
	waitFor(t, 5*time.Second, "n1 connected", n1.Connected)
	waitFor(t, 5*time.Second, "n1 owns the room again", func() bool {
		l, mine := own.Current()
		return mine && l.Epoch > before.Epoch
	})
	if ok, why := n1.Accepting(); !ok {
		t.Fatalf("not accepting after recovery: %s", why)
	}
	check := rawPublisher(t, srv.Addr())
	waitFor(t, 2*time.Second, "n1's record in the new Redis", func() bool {
		recs, err := check.Nodes(context.Background())
		return err == nil && len(recs) == 1 && recs[0].ID == "n1" && recs[0].Slot == slot
	})
	// Another node joining now gets another slot.
	n2 := startNode(t, srv.Addr(), "n2")
	if n2.Self().Slot == slot {
		t.Fatalf("n2 got n1's slot %d", slot)
	}
}

func TestMaxSessions(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	sessions := 0
	eng := rawPublisher(t, srv.Addr())
	n, err := cluster.New(cluster.Config{NodeID: "n1", Secret: secret, Heartbeat: heartbeat, NodeTTL: nodeTTL,
		LeaseTTL: leaseTTL, MaxSessions: 2}, eng, cluster.WithLoad(func() cluster.Load {
		mu.Lock()
		defer mu.Unlock()
		return cluster.Load{Sessions: sessions, PeerConnections: 2 * sessions}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())
	if ok, _ := n.Accepting(); !ok {
		t.Fatal("empty node refuses")
	}
	mu.Lock()
	sessions = 2
	mu.Unlock()
	if ok, why := n.Accepting(); ok || why == "" {
		t.Fatalf("full node accepts: %q", why)
	}
	waitFor(t, time.Second, "load in the record", func() bool {
		recs, _ := eng.Nodes(context.Background())
		return len(recs) == 1 && recs[0].Load == cluster.Load{Sessions: 2, PeerConnections: 4, MaxSessions: 2} && recs[0].Full()
	})
}

// Every topic a node follows shares the node's one subscription (one connection to Redis), and a
// cancelled subscriber's topic is unsubscribed while the others go on.
func TestTopicsShareOneSubscription(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	n2 := startNode(t, srv.Addr(), "n2")
	const topics = 20
	got := make([]*received, topics)
	cancels := make([]func(), topics)
	for i := range got {
		got[i] = &received{}
		cancels[i] = n2.Topic(fmt.Sprintf("room/%d", i)).Subscribe(got[i].env, got[i].gap)
	}
	for i := range got {
		subscribed(t, n1.Topic(fmt.Sprintf("room/%d", i)), got[i])
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer admin.Close()
	ctx := context.Background()
	clients, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(clients, "flags=P"); n != 1 {
		t.Fatalf("%d pub/sub connections for %d topics, want 1:\n%s", n, topics, clients)
	}
	cancels[0]()
	waitFor(t, 2*time.Second, "room/0 unsubscribed", func() bool {
		n, _ := admin.PubSubNumSub(ctx, "t:topic:room/0").Result()
		return n["t:topic:room/0"] == 0
	})
	before, _ := got[0].counts()
	if err := n1.Topic("room/0").Publish(ctx, "late", 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := n1.Topic("room/1").Publish(ctx, "late", 0, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "room/1 still delivered", func() bool { return got[1].kind("late") == 1 })
	if n, _ := got[0].counts(); n != before {
		t.Fatal("a cancelled subscriber got an event")
	}
}

// TestSubscribeWhileStopping: a plugin may follow a room while its node stops. Subscriptions
// made while Stop waits for the subscribers' goroutines must not be counted after the wait began
// (WaitGroup misuse, which -race reports); one made after Stop is a no-op.
func TestSubscribeWhileStopping(t *testing.T) {
	srv := redistest.Start(t)
	n := startNode(t, srv.Addr(), "a")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel := n.Topic(fmt.Sprintf("room/%d", i)).Subscribe(func(cluster.Envelope) {}, func(string) {})
			defer cancel()
		}()
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	cancel := n.Topic("room/after").Subscribe(func(cluster.Envelope) { t.Error("an event after Stop") }, func(string) {})
	cancel()
}
