package videoroom

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
)

// The owner's side of a room that spans nodes: its decisions and the events that publish them.

// ownerRequests are the synchronous requests the room's owner runs, wherever they arrive.
var ownerRequests = map[string]bool{
	"edit": true, "destroy": true, "allowed": true, "kick": true, "moderate": true, "enable_recording": true,
}

// stateChanging are the owner's requests after which the nodes get the room again (its options).
var stateChanging = map[string]bool{"edit": true, "allowed": true, "enable_recording": true}

// serve answers a request as the room's owner (from is the asking node, this one included).
func (c *clusterNode) serve(ctx context.Context, from string, req ownerRequest) ownerAnswer {
	switch req.Op {
	case opRooms:
		return ownerAnswer{Rooms: c.knownRooms()}
	case opForward: // any node, for its own publishers
		return c.serveForward(req)
	}
	cr := c.roomOf(req.Room)
	if cr == nil && req.Op == opSync && req.Options != nil {
		// A room created on another node whose announcement this node missed.
		cr = c.adopt(req.Room, *req.Options)
	}
	if cr == nil {
		return refusal(errorf(ErrNoSuchRoom, "No such room (%d)", req.Room))
	}
	cr.ownerMu.Lock()
	defer cr.ownerMu.Unlock()
	epoch, mine := cr.owned()
	if !mine {
		return ownerAnswer{NotOwner: true}
	}
	r := cr.r
	switch req.Op {
	case opJoin:
		pub := newRemote(r, from, *req.Member)
		r.mu.Lock()
		id, err := r.admitLocked(req.Member.ID, req.Member.ID != 0, c.p.cfg.Limits.ParticipantsPerRoom)
		if err == nil {
			pub.id = id
			r.remote[id] = pub
		}
		r.mu.Unlock()
		if err != nil {
			return refusal(err)
		}
		m := *req.Member
		m.ID, m.Node = pub.id, from
		cr.publish(ctx, epoch, evMember, m)
		return ownerAnswer{ID: pub.id}
	case opPublish:
		if pub := r.participant(req.Member.ID); pub != nil && !pub.isActive() {
			if n, max := r.activePublishers(), r.options().publishers; n >= max {
				return refusal(errorf(ErrPublishersFull, "Maximum number of publishers (%d) reached", max))
			}
		}
		return ownerAnswer{}
	case opUpdate, opLeave:
		m := *req.Member
		m.Node = from
		m.Gone = req.Op == opLeave
		if from != c.self && !c.applyMember(r, m, false) {
			return ownerAnswer{} // not this node's participant (any more): nothing to tell
		}
		cr.publish(ctx, epoch, evMember, m)
		return ownerAnswer{}
	case opEvent:
		if from != c.self {
			r.notifyHere(req.Body)
		}
		cr.publish(ctx, epoch, evEvent, wireEvent{Node: from, Event: req.Body})
		return ownerAnswer{}
	case opSync:
		if from != c.self {
			c.replaceNode(r, from, req.Members)
		}
		cr.mu.Lock()
		if cr.synced == nil {
			cr.synced = map[string]bool{c.self: true}
		}
		cr.synced[from] = true
		cr.mu.Unlock()
		cr.publish(ctx, epoch, evState, c.stateOf(cr))
		return ownerAnswer{}
	case opAdmin:
		b, rerr := parseBody(req.Body)
		if rerr != nil {
			return refusal(rerr)
		}
		name, _, _ := b.str("request", false)
		if !ownerRequests[name] {
			return refusal(errorf(ErrInvalidRequest, "Unknown request '%s'", name))
		}
		data, rerr := c.runAdmin(ctx, cr, epoch, name, b)
		if rerr != nil {
			return refusal(rerr)
		}
		raw, _ := json.Marshal(data)
		return ownerAnswer{Data: raw}
	}
	return refusal(errorf(ErrInvalidRequest, "Unknown request '%s'", req.Op))
}

// runAdmin runs a room-level request as the owner (ownerMu held).
func (c *clusterNode) runAdmin(ctx context.Context, cr *clusterRoom, epoch uint64, name string, b body) (map[string]any, *requestError) {
	data, err := syncRequests[name](c.p, b)
	if err == nil && stateChanging[name] {
		cr.publish(ctx, epoch, evState, c.stateOf(cr))
	}
	return data, err
}

// syncRequest answers a synchronous request: the room-level ones run on the room's owner.
func (p *Plugin) syncRequest(name string, b body) (map[string]any, *requestError) {
	handler := syncRequests[name]
	if p.cl == nil {
		return handler(p, b)
	}
	if name == "create" {
		return p.cl.create(b)
	}
	if !ownerRequests[name] {
		return handler(p, b)
	}
	id, err := b.room()
	if err != nil {
		return nil, err
	}
	cr := p.cl.roomOf(id)
	if cr == nil {
		return handler(p, b) // no such room: the handler says so
	}
	if epoch, mine := cr.owned(); mine {
		ctx, cancel := context.WithTimeout(p.cl.ctx, ownerWait)
		defer cancel()
		cr.ownerMu.Lock()
		defer cr.ownerMu.Unlock()
		return p.cl.runAdmin(ctx, cr, epoch, name, b)
	}
	raw, _ := json.Marshal(b)
	ans, rerr := cr.askFor(p.cl.ctx, ownerRequest{Op: opAdmin, Room: id, Body: raw})
	if rerr != nil {
		return nil, rerr
	}
	var data map[string]any
	if err := json.Unmarshal(ans.Data, &data); err != nil {
		return nil, errorf(ErrUnknown, "The room's owner answered nonsense: %v", err)
	}
	return data, nil
}

// notice carries out an owner's decision here and on every other node (ownerMu held: the
// handlers run through runAdmin or serve).
func (c *clusterNode) notice(r *room, n wireNotice) {
	cr := r.cl.Load()
	if cr == nil {
		return
	}
	epoch, _ := cr.owned()
	ctx, cancel := context.WithTimeout(c.ctx, ownerWait)
	defer cancel()
	cr.publish(ctx, epoch, evNotice, n)
	c.applyNotice(cr, n)
}

// applyNotice carries out an owner's decision on this node.
func (c *clusterNode) applyNotice(cr *clusterRoom, n wireNotice) {
	r := cr.r
	switch n.Action {
	case noticeKick:
		if m := r.local(n.ID); m != nil {
			c.p.kickHere(r, m)
		} else {
			r.notifyHere(mustJSON(map[string]any{short: "event", "room": r.id, "kicked": n.ID}))
		}
	case noticeModerate:
		if m := r.participant(n.ID); m != nil {
			m.moderate(n.Mid, n.Mute)
			if m.node == "" {
				c.announce(m)
			}
		}
		r.notifyHere(mustJSON(moderationEvent(r, n.ID, n.Mid, n.Mute)))
	case noticeDestroy:
		c.p.destroyHere(r)
		go c.unfollow(cr)
	}
}

// create creates a room through the API: this node takes its lease, which no other node may
// hold (the room would exist already), and tells the others.
func (c *clusterNode) create(b body) (map[string]any, *requestError) {
	data, err := c.p.create(b)
	if err != nil {
		return nil, err
	}
	id := data["room"].(uint64)
	r, err := c.p.room(id)
	if err != nil {
		return nil, err
	}
	cr := c.follow(r)
	if cr == nil {
		return nil, errorf(ErrUnknown, "The plugin is shutting down")
	}
	deadline := time.Now().Add(ownerWait)
	for {
		l, mine := cr.own.Current()
		if mine {
			break
		}
		if l.Holder != "" || time.Now().After(deadline) {
			c.unfollow(cr)
			c.p.mu.Lock()
			delete(c.p.rooms, id)
			c.p.mu.Unlock()
			if l.Holder != "" {
				// The holder's announcement of the room may have been adopted into the room this
				// request had just made, and gone with it: learn the room again from the others.
				go c.fetchRooms()
				return nil, errorf(ErrRoomExists, "Room %d already exists", id)
			}
			return nil, errorf(ErrUnknown, "Room %d: no lease from the cluster", id)
		}
		time.Sleep(ownerRetry)
	}
	ctx, cancel := context.WithTimeout(c.ctx, ownerWait)
	defer cancel()
	if err := c.view.Topic(roomsTopic).Publish(ctx, evCreated, 0, wireRoom{Room: id, Options: r.options().wire()}); err != nil {
		c.log.Warn("announcing a created room", "room", id, "err", err)
	}
	return data, nil
}

// stateOf is the room as its owner holds it.
func (c *clusterNode) stateOf(cr *clusterRoom) wireState {
	cr.mu.Lock()
	nodes := make([]string, 0, len(cr.synced))
	for n := range cr.synced {
		nodes = append(nodes, n)
	}
	cr.mu.Unlock()
	slices.Sort(nodes)
	st := wireState{Room: cr.r.id, Options: cr.r.options().wire(), Nodes: nodes, Members: []wireMember{}}
	for _, pub := range cr.r.everyone() {
		if pub.node == "" {
			st.Members = append(st.Members, c.wireOf(pub))
		} else {
			st.Members = append(st.Members, pub.wire())
		}
	}
	return st
}

// admitLocked admits a participant: the room's participant limit (0: none) and an id that no
// participant of any node has (given: the client's, else a random one); r.mu is held.
func (r *room) admitLocked(id uint64, given bool, limit int) (uint64, *requestError) {
	if r.destroyed {
		return 0, errorf(ErrNoSuchRoom, "No such room (%d)", r.id)
	}
	if limit > 0 && len(r.participants)+len(r.remote) >= limit {
		return 0, errorf(ErrPublishersFull, "Maximum number of participants (%d) reached (plugins.videoroom.limits.participants_per_room)", limit)
	}
	if given {
		if id == 0 || r.takenLocked(id) {
			return 0, errorf(ErrIDExists, "User ID %d already exists", id)
		}
		return id, nil
	}
	for id = plugin.RandomID(); r.takenLocked(id); id = plugin.RandomID() {
	}
	return id, nil
}

// local finds a participant this node holds.
func (r *room) local(id uint64) *publisher {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.participants[id]
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

func moderationEvent(r *room, id uint64, mid string, mute bool) map[string]any {
	return map[string]any{short: "event", "room": r.id, "id": id, "mid": mid,
		"moderation": map[bool]string{true: "muted", false: "unmuted"}[mute]}
}

// admit makes pub a participant of r. In a cluster the room's owner admits it (its limits, an
// id no node's participant has); this node asks it unless it is the owner.
func (p *Plugin) admit(ctx context.Context, r *room, pub *publisher, id uint64, given bool) *requestError {
	cr := r.cl.Load()
	if cr != nil {
		if _, mine := cr.owned(); !mine {
			if given && id == 0 {
				return errorf(ErrIDExists, "User ID %d already exists", id)
			}
			m := p.cl.wireOf(pub)
			m.ID = id
			cr.admitMu.Lock()
			defer cr.admitMu.Unlock()
			ans, err := cr.askFor(ctx, ownerRequest{Op: opJoin, Room: r.id, Member: &m})
			if err != nil {
				return err
			}
			r.mu.Lock()
			ok := !r.destroyed && r.participants[ans.ID] == nil
			if ok {
				delete(r.remote, ans.ID) // an echo of the admission, if it came first
				pub.id = ans.ID
				r.participants[ans.ID] = pub
			}
			r.mu.Unlock()
			if !ok { // the room went meanwhile: the owner forgets the admission
				cr.enqueue(ownerRequest{Op: opLeave, Room: r.id, Member: &wireMember{ID: ans.ID}})
				return errorf(ErrNoSuchRoom, "No such room (%d)", r.id)
			}
			return nil
		}
		cr.ownerMu.Lock() // with the owner's other decisions
		defer cr.ownerMu.Unlock()
	}
	r.mu.Lock()
	id, err := r.admitLocked(id, given, p.cfg.Limits.ParticipantsPerRoom)
	if err == nil {
		pub.id = id
		r.participants[id] = pub
	}
	r.mu.Unlock()
	if err == nil && cr != nil {
		p.cl.announce(pub)
	}
	return err
}

// mayPublish asks the room's owner whether pub may start publishing (the room's publisher limit
// over every node); this node's own count was checked already.
func (p *Plugin) mayPublish(ctx context.Context, pub *publisher) *requestError {
	cr := pub.room.cl.Load()
	if cr == nil {
		return nil
	}
	if _, mine := cr.owned(); mine {
		return nil
	}
	m := wireMember{ID: pub.id}
	_, err := cr.askFor(ctx, ownerRequest{Op: opPublish, Room: pub.room.id, Member: &m})
	return err
}

// importFeeds gets the feeds of other nodes a subscriber wants (clusterfeed.go).
func (p *Plugin) importFeeds(ctx context.Context, ws []wanted) *requestError {
	if p.cl == nil {
		return nil
	}
	return p.cl.importFeeds(ctx, ws)
}
