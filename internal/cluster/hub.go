package cluster

import (
	"context"
	"sync"
	"time"
)

// hub is the node's one subscription to the engine, shared by every topic subscriber: a node
// following many rooms holds one connection to Redis for their events, not one per room. It
// decodes each message once and hands it to the topic's subscribers.
type hub struct {
	n *Node

	mu   sync.Mutex
	subs map[string]map[*subscriber]struct{} // by topic
	// listening are the topics the engine's subscription was asked for (so that a topic is added
	// or removed once: adding it twice would look like a reconnection).
	listening map[string]bool
	running   bool
	// changed wakes the hub's goroutine to bring the subscription's channels up to date: the
	// requests to the engine are made there, never by Subscribe or its cancel.
	changed chan struct{}
}

func newHub(n *Node) *hub {
	return &hub{n: n, subs: make(map[string]map[*subscriber]struct{}), listening: make(map[string]bool),
		changed: make(chan struct{}, 1)}
}

func (h *hub) poke() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// add registers a subscriber of topic and returns its cancel.
func (h *hub) add(topic string, f func(Envelope), gap func(string)) (cancel func()) {
	s := &subscriber{topic: topic, f: f, gap: gap, inbox: make(chan delivery, subscriberInbox), done: make(chan struct{})}
	// The goroutines are counted before Stop waits for them, or not started at all: a plugin may
	// still follow a room while the node stops.
	h.n.subsMu.Lock()
	if h.n.subsClosed {
		h.n.subsMu.Unlock()
		return func() {}
	}
	h.mu.Lock()
	if h.subs[topic] == nil {
		h.subs[topic] = make(map[*subscriber]struct{})
	}
	h.subs[topic][s] = struct{}{}
	start := !h.running
	h.running = true
	h.mu.Unlock()
	h.n.subs.Add(1)
	if start {
		h.n.subs.Add(1)
	}
	h.n.subsMu.Unlock()
	go s.run(h.n)
	h.poke()
	if start {
		go h.run()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(s.done)
			h.mu.Lock()
			delete(h.subs[topic], s)
			if len(h.subs[topic]) == 0 {
				delete(h.subs, topic)
			}
			h.mu.Unlock()
			h.poke()
		})
	}
}

// sync makes sub listen on exactly the topics with subscribers. A failed change is left to
// go-redis, which keeps the channel list and applies it when it reconnects.
func (h *hub) sync(sub Subscription) {
	h.mu.Lock()
	var add, remove []string
	for topic := range h.subs {
		if !h.listening[topic] {
			add = append(add, topicPrefix+topic)
			h.listening[topic] = true
		}
	}
	for topic := range h.listening {
		if h.subs[topic] == nil {
			remove = append(remove, topicPrefix+topic)
			delete(h.listening, topic)
		}
	}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), h.n.cfg.NodeTTL)
	defer cancel()
	_ = sub.Add(ctx, add...)
	_ = sub.Remove(ctx, remove...)
}

// run keeps the engine's subscription until the node stops: it subscribes again, with a retry
// every heartbeat, when the engine was unreachable or the subscription ended, and then tells
// every subscriber that events may have been lost.
func (h *hub) run() {
	defer h.n.subs.Done()
	for first := true; ; first = false {
		sub := h.subscribe()
		if sub == nil {
			return // stopped
		}
		if !first {
			h.broadcastLost()
		}
		h.pump(sub)
		h.mu.Lock()
		clear(h.listening)
		h.mu.Unlock()
		_ = sub.Close()
		select {
		case <-h.n.stop:
			return
		default:
		}
	}
}

// subscribe makes the engine's subscription for the current topics, retrying until it succeeds
// or the node stops (nil).
func (h *hub) subscribe() Subscription {
	for {
		h.mu.Lock()
		channels := make([]string, 0, len(h.subs))
		for topic := range h.subs {
			channels = append(channels, topicPrefix+topic)
		}
		h.mu.Unlock()
		if len(channels) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), h.n.cfg.NodeTTL)
			sub, err := h.n.eng.Subscribe(ctx, channels...)
			cancel()
			if err == nil {
				h.mu.Lock()
				for _, c := range channels {
					topic, _ := topicName(c)
					h.listening[topic] = true
				}
				h.mu.Unlock()
				h.sync(sub) // topics added or removed meanwhile
				return sub
			}
		}
		select {
		case <-h.n.stop:
			return nil
		case <-time.After(h.n.cfg.Heartbeat):
		}
	}
}

// pump hands sub's messages to the subscribers until sub ends or the node stops.
func (h *hub) pump(sub Subscription) {
	for {
		select {
		case <-h.n.stop:
			return
		case <-h.changed:
			h.sync(sub)
		case <-sub.Reconnected():
			h.broadcastLost()
		case m, ok := <-sub.Messages():
			if !ok {
				return
			}
			h.dispatch(m)
		}
	}
}

func (h *hub) dispatch(m Message) {
	topic, ok := topicName(m.Channel)
	if !ok {
		return
	}
	env, err := DecodeEnvelope(topic, m.Payload)
	if err != nil {
		h.n.malformed.Add(1)
		if h.n.badInput.Observe(topic, err.Error()) {
			h.n.log.Warn("cluster: malformed message dropped", "topic", topic, "error", err)
		}
		return
	}
	if env.From == h.n.cfg.NodeID {
		return
	}
	h.deliver(h.subscribers(topic), delivery{env: env})
}

func (h *hub) broadcastLost() {
	h.deliver(h.subscribers(""), delivery{lost: true})
}

// subscribers of topic ("": of every topic).
func (h *hub) subscribers(topic string) []*subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*subscriber
	for t, set := range h.subs {
		if topic != "" && t != topic {
			continue
		}
		for s := range set {
			out = append(out, s)
		}
	}
	return out
}

// deliver waits for a subscriber that is a full inbox behind rather than drop its event (it
// would have to resynchronise); a cancelled subscriber is skipped.
func (h *hub) deliver(to []*subscriber, d delivery) {
	for _, s := range to {
		select {
		case s.inbox <- d:
		case <-s.done:
		case <-h.n.stop:
			return
		}
	}
}
