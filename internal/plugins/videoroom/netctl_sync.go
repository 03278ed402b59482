package videoroom

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/netctl/client"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// wantedStream is a published video stream as the controller should know it.
type wantedStream struct {
	id     string
	layers []api.Layer // nil while its layers are not measured yet
	marks  sfu.LayerMarks
}

// wantedSub is a subscriber's video stream as the controller should know it.
type wantedSub struct {
	id, stream, receiver string
	flow                 *api.Flow // switch mode, once ICE has selected a pair
	alloc                *sfu.Allocator
	down                 *sfu.DownTrack
}

// syncLoop reconciles the controller's registrations with the rooms every interval.
func (b *netBridge) syncLoop() {
	t := time.NewTicker(b.cfg.Interval)
	defer t.Stop()
	for {
		b.sync()
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sync registers what is new, updates changed layer rates, and removes what is gone. It stops at
// the first sign of an outage (the next tick tries again).
func (b *netBridge) sync() {
	streams, subs := b.wanted()
	if b.syncStreams(streams) && b.syncSubs(streams, subs) {
		b.mu.Lock()
		if b.down && b.watchUp {
			b.down = false
			b.log.Info("netctl controller reachable again: following its decisions")
		}
		b.mu.Unlock()
	}
	b.feed()
}

// netStreamID names a published stream at the controller.
func netStreamID(room, feed uint64, mid string) string {
	return fmt.Sprintf("r%d.f%d.m%s", room, feed, mid)
}

// wanted lists the video streams and subscriptions of every room.
func (b *netBridge) wanted() (map[string]wantedStream, map[string]wantedSub) {
	now := sfu.Now()
	streams := map[string]wantedStream{}
	for _, r := range b.p.roomList() {
		for _, pub := range r.members() {
			for _, st := range pub.streamList() {
				if st.kind != "video" || st.recv == nil {
					continue
				}
				w := wantedStream{id: netStreamID(r.id, pub.id, st.mid)}
				if st.recv.Measured(now) {
					var ladder []policy.Layer
					w.layers, ladder = ladderLayers(st.recv.Rates(now))
					w.marks = b.markLayers(st.recv, w.layers, ladder)
				}
				streams[w.id] = w
			}
		}
	}
	subs := map[string]wantedSub{}
	for _, s := range b.p.sessions.All() {
		_, sub := s.roles()
		if sub == nil {
			continue
		}
		sub.mu.Lock()
		alloc, closed, pc := sub.alloc, sub.closed, sub.peer
		list := append([]*subStream(nil), sub.streams...)
		sub.mu.Unlock()
		if alloc == nil || closed {
			continue
		}
		flow := b.flowOf(pc)
		for _, ss := range list {
			if ss.src.kind != "video" {
				continue
			}
			stream := netStreamID(sub.room.id, ss.feed.id, ss.src.mid)
			if _, ok := streams[stream]; !ok {
				continue
			}
			id := fmt.Sprintf("%s.h%d.%s", stream, s.h.ID(), ss.down.ID())
			subs[id] = wantedSub{id: id, stream: stream, receiver: b.receiverOf(s.h.OpaqueID()), flow: flow, alloc: alloc, down: ss.down}
		}
	}
	return streams, subs
}

// receiverOf maps a subscriber to its receiver node: the longest matching opaque_id prefix of
// the configuration's receivers, else the default receiver.
func (b *netBridge) receiverOf(opaque string) string {
	node, best := b.cfg.Receiver, -1
	for prefix, n := range b.cfg.Receivers {
		if strings.HasPrefix(opaque, prefix) && len(prefix) > best {
			node, best = n, len(prefix)
		}
	}
	return node
}

// ladderLayers lists a stream's rungs in the order the layer policies climb them (every measured
// layer costing more than the one before, spatial then temporal), each with its own rate: its
// cost minus the previous rung's, so that the controller's sums are the rungs' costs; and the
// rungs' layers.
func ladderLayers(rates policy.Rates) (out []api.Layer, ladder []policy.Layer) {
	var prev int64
	for s := range policy.MaxSpatial {
		for t := range policy.MaxTemporal {
			r := int64(rates[s][t])
			if r <= 0 || r <= prev {
				continue
			}
			l := policy.Layer{Spatial: int8(s), Temporal: int8(t)}
			out = append(out, api.Layer{RateBps: r - prev, Name: l.String()})
			ladder = append(ladder, l)
			prev = r
		}
	}
	return out, ladder
}

// layersChanged says whether new measured layers differ enough from the registered ones to be
// sent again: another rung count, or a rate off by more than 10 %.
func layersChanged(old, cur []api.Layer) bool {
	if len(old) != len(cur) {
		return true
	}
	for i := range old {
		if old[i].Name != cur[i].Name || old[i].DSCP != cur[i].DSCP {
			return true
		}
		d := old[i].RateBps - cur[i].RateBps
		if d < 0 {
			d = -d
		}
		if d*10 > old[i].RateBps {
			return true
		}
	}
	return false
}

// syncStreams registers, updates and removes streams; false on an outage.
func (b *netBridge) syncStreams(want map[string]wantedStream) bool {
	b.mu.Lock()
	var gone []string
	for id := range b.streams {
		if _, ok := want[id]; !ok {
			gone = append(gone, id)
		}
	}
	b.mu.Unlock()
	for _, id := range gone {
		if err := b.c.DeleteStream(b.ctx, id); !gone404(err) && b.failed(id, err) {
			return false
		}
		b.mu.Lock()
		delete(b.streams, id)
		b.mu.Unlock()
	}
	for id, w := range want {
		if len(w.layers) == 0 {
			continue
		}
		b.mu.Lock()
		reg := b.streams[id]
		registered := reg != nil && reg.registered
		b.mu.Unlock()
		var err error
		switch {
		case !registered:
			err = b.c.PutStream(b.ctx, api.Stream{ID: id, Source: b.cfg.Node, Layers: w.layers})
		case time.Since(reg.sentAt) >= layerUpdateEvery && layersChanged(reg.layers, w.layers):
			err = b.c.SetLayers(b.ctx, id, w.layers)
		default:
			continue
		}
		if err != nil {
			if b.failed(id, err) {
				return false
			}
			continue
		}
		b.mu.Lock()
		b.streams[id] = &netStream{layers: w.layers, marks: w.marks, sentAt: time.Now(), registered: true}
		b.mu.Unlock()
	}
	return true
}

// syncSubs registers new subscriptions of registered streams and removes those that are gone;
// false on an outage.
func (b *netBridge) syncSubs(streams map[string]wantedStream, want map[string]wantedSub) bool {
	b.mu.Lock()
	var gone []string
	for id := range b.subs {
		if _, ok := want[id]; !ok {
			gone = append(gone, id)
		}
	}
	for id, w := range want {
		if s := b.subs[id]; s == nil || s.alloc != w.alloc {
			b.subs[id] = &netSub{stream: w.stream, alloc: w.alloc, down: w.down}
		}
	}
	b.mu.Unlock()
	for _, id := range gone {
		b.mu.Lock()
		s := b.subs[id]
		b.mu.Unlock()
		if s == nil {
			continue
		}
		// A subscription of a deleted stream went with it.
		if _, streamKept := streams[s.stream]; streamKept {
			if err := b.c.DeleteSubscription(b.ctx, id); !gone404(err) && b.failed(id, err) {
				return false
			}
		}
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
	for id, w := range want {
		b.mu.Lock()
		st := b.streams[w.stream]
		s, streamUp := b.subs[id], st != nil && st.registered
		// A new selected ICE pair (an ICE restart, a network change) moves the flow: register again.
		current := s.registered && flowEqual(s.flow, w.flow)
		b.mu.Unlock()
		if current || !streamUp {
			continue
		}
		res, err := b.c.PutSubscription(b.ctx, api.Subscription{ID: id, Stream: w.stream, Receiver: w.receiver, Flow: w.flow})
		if err != nil {
			if b.failed(id, err) {
				return false
			}
			continue
		}
		b.mu.Lock()
		s.registered, s.flow = true, w.flow
		b.decisions[id] = netDecision{res.Decision.Layers, res.Decision.Enforced}
		b.mu.Unlock()
	}
	return true
}

// gone404 says a removal needs no more attention: it worked, or the controller did not know the
// id (already gone).
func gone404(err error) bool {
	var apiErr *client.APIError
	return err == nil || (errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound)
}
