package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// topic is a Topic on the engine's channel "topic:<name>" (the engine adds the cluster's prefix).
type topic struct {
	n       *Node
	name    string
	channel string
}

// Topic returns the ordered event channel named name.
func (n *Node) Topic(name string) Topic {
	return &topic{n: n, name: name, channel: "topic:" + name}
}

// Publish sends one event, stamped with this node, epoch and the topic's next sequence number.
// A failed publication still used its number: the subscribers see a gap and resynchronise,
// which is right since they may or may not have received it.
func (t *topic) Publish(ctx context.Context, kind string, epoch uint64, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("cluster: topic %s: encode %s: %w", t.name, kind, err)
	}
	t.n.mu.Lock()
	ts := t.n.seqs[t.name]
	if ts == nil {
		ts = &topicSeq{}
		t.n.seqs[t.name] = ts
	}
	t.n.mu.Unlock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.seq++
	env := Envelope{Topic: t.name, From: t.n.cfg.NodeID, Epoch: epoch, Seq: ts.seq, Kind: kind, Body: raw}
	payload, err := json.Marshal(env)
	if err != nil {
		return err
	}
	if len(payload) > MaxEnvelope {
		return fmt.Errorf("cluster: topic %s: %s event of %d bytes exceeds %d", t.name, kind, len(payload), MaxEnvelope)
	}
	if err := t.n.eng.Publish(ctx, t.channel, payload); err != nil {
		return fmt.Errorf("cluster: topic %s: publish %s: %w", t.name, kind, err)
	}
	return nil
}

// Subscribe delivers the other nodes' events on the topic, in order per sender, on one goroutine
// (f and gap must not block for long: the engine buffers only so much). gap(from) reports lost
// events of sender from: a hole in its numbers, a new epoch, a restart, or a lost subscription
// (then every sender heard of gets one). This node's own events are not delivered.
func (t *topic) Subscribe(f func(Envelope), gap func(from string)) (cancel func()) {
	ctx, stop := context.WithCancel(context.Background())
	t.n.subs.Add(1)
	go func() {
		defer t.n.subs.Done()
		t.follow(ctx, f, gap)
	}()
	return stop
}

// follow keeps a subscription until ctx ends or the node stops: it subscribes again, with a
// retry every heartbeat, when the engine was unreachable or the subscription ended.
func (t *topic) follow(ctx context.Context, f func(Envelope), gap func(string)) {
	var seq sequencer
	lost := func() {
		for _, from := range seq.reset() {
			t.n.gaps.Add(1)
			gap(from)
		}
	}
	for first := true; ; first = false {
		sub, err := t.n.eng.Subscribe(ctx, t.channel)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-t.n.stop:
				return
			case <-time.After(t.n.cfg.Heartbeat):
			}
			continue
		}
		if !first {
			lost()
		}
		done := t.pump(ctx, sub, &seq, f, gap, lost)
		_ = sub.Close()
		if done {
			return
		}
	}
}

// pump delivers sub's messages until it ends (false: subscribe again) or the subscriber or node
// stops (true).
func (t *topic) pump(ctx context.Context, sub Subscription, seq *sequencer, f func(Envelope), gap func(string), lost func()) bool {
	for {
		select {
		case <-ctx.Done():
			return true
		case <-t.n.stop:
			return true
		case <-sub.Reconnected():
			lost()
		case m, ok := <-sub.Messages():
			if !ok {
				return false
			}
			env, err := DecodeEnvelope(t.name, m.Payload)
			if err != nil {
				t.n.malformed.Add(1)
				if t.n.badInput.Observe(t.name, err.Error()) {
					t.n.log.Warn("cluster: malformed message dropped", "topic", t.name, "error", err)
				}
				continue
			}
			if env.From == t.n.cfg.NodeID {
				continue
			}
			switch seq.admit(env) {
			case gapAndDeliver:
				t.n.gaps.Add(1)
				gap(env.From)
				f(env)
			case deliver:
				f(env)
			}
		}
	}
}
