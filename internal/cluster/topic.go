package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// topicPrefix starts every topic's channel (the engine adds the cluster's name before it).
const topicPrefix = "topic:"

// topic is a Topic on the engine's channel "topic:<name>".
type topic struct {
	n    *Node
	name string
}

// Topic returns the ordered event channel named name.
func (n *Node) Topic(name string) Topic { return &topic{n: n, name: name} }

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
	if err := t.n.eng.Publish(ctx, topicPrefix+t.name, payload); err != nil {
		return fmt.Errorf("cluster: topic %s: publish %s: %w", t.name, kind, err)
	}
	return nil
}

// Subscribe delivers the other nodes' events on the topic, in order per sender, on a goroutine of
// this subscriber's (f and gap must not block for long: the node's one subscription feeds every
// subscriber). gap(from) reports lost events of sender from: a hole in its numbers, a new epoch, a
// restart, or a lost subscription (then every sender heard of gets one). This node's own events
// are not delivered.
func (t *topic) Subscribe(f func(Envelope), gap func(from string)) (cancel func()) {
	return t.n.hub.add(t.name, f, gap)
}

// subscriber is one Subscribe: its events arrive through inbox, in the order the hub received
// them, and its goroutine puts them in order per sender.
type subscriber struct {
	topic string
	f     func(Envelope)
	gap   func(string)
	inbox chan delivery
	done  chan struct{}
}

// delivery is an envelope, or (lost) the news that the subscription was re-established.
type delivery struct {
	env  Envelope
	lost bool
}

// subscriberInbox is how many events a subscriber may be behind before the hub waits for it.
const subscriberInbox = 1024

func (s *subscriber) run(n *Node) {
	defer n.subs.Done()
	var seq sequencer
	for {
		var d delivery
		select {
		case d = <-s.inbox:
		case <-s.done:
			return
		case <-n.stop:
			return
		}
		if d.lost {
			for _, from := range seq.reset() {
				n.gaps.Add(1)
				s.gap(from)
			}
			continue
		}
		switch seq.admit(d.env) {
		case gapAndDeliver:
			n.gaps.Add(1)
			s.gap(d.env.From)
			s.f(d.env)
		case deliver:
			s.f(d.env)
		}
	}
}

// topicName is the topic of a channel, false for a channel that is no topic's.
func topicName(channel string) (string, bool) { return strings.CutPrefix(channel, topicPrefix) }
