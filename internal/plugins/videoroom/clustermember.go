package videoroom

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// A node's copy of the other nodes' participants: what it learns from the room's events, what
// it drops when a node is gone, and the feeds it imports for its subscribers.

// remoteFeed is what a node keeps of another node's participant besides its publisher copy.
type remoteFeed struct {
	mu       sync.Mutex
	imported *relay.Import // the relay's import, once a subscriber here wanted the feed
}

// newRemote is a copy of another node's participant.
func newRemote(r *room, node string, m wireMember) *publisher {
	pub := &publisher{room: r, id: m.ID, node: node, remote: &remoteFeed{}, forwarders: map[uint32]*forwarder{}}
	pub.setRemote(m)
	return pub
}

// setRemote takes what the participant's node announced. Streams that stay keep their state
// (and an imported Receiver); a changed stream is a new one.
func (pub *publisher) setRemote(m wireMember) {
	old := map[string]*pubStream{}
	for _, st := range pub.streamList() {
		old[st.mid] = st
	}
	var streams []*pubStream
	var data *pubData
	for _, w := range m.Streams {
		if w.Kind == wireData {
			data = &pubData{mid: w.Mid, mindex: w.MIndex}
			continue
		}
		st := old[w.Mid]
		if st == nil || st.kind != w.Kind || st.codecName != w.Codec || st.fmtp != w.Fmtp || st.simulcast != w.Simulcast || st.svc != w.SVC {
			st = &pubStream{mid: w.Mid, mindex: w.MIndex, kind: w.Kind, codecName: w.Codec, fmtp: w.Fmtp, simulcast: w.Simulcast, svc: w.SVC}
		}
		st.mu.Lock()
		st.description, st.moderated, st.talking = w.Description, w.Moderated, w.Talking
		st.mu.Unlock()
		streams = append(streams, st)
	}
	pub.mu.Lock()
	pub.display, pub.metadata, pub.active = m.Display, m.Metadata, m.Active
	pub.streams = sortedMids(streams)
	if data == nil || pub.data == nil || pub.data.mid != data.mid || pub.data.mindex != data.mindex {
		pub.data = data // a data stream that stays keeps its imported receiver
	}
	pub.mu.Unlock()
}

// wire describes a participant: one of this node's for the others (clusterNode.wireOf), or a copy
// of another node's (a new owner's state). The data stream is a stream of kind "data".
func (pub *publisher) wire() wireMember {
	pub.mu.Lock()
	m := wireMember{ID: pub.id, Node: pub.node, Display: pub.display, Metadata: pub.metadata, Active: pub.active && pub.publishedLocked()}
	pub.mu.Unlock()
	for _, st := range pub.streamList() {
		st.mu.Lock()
		m.Streams = append(m.Streams, wireStream{Mid: st.mid, MIndex: st.mindex, Kind: st.kind, Codec: st.codecName,
			Fmtp: st.fmtp, Simulcast: st.simulcast, SVC: st.svc, Description: st.description, Moderated: st.moderated, Talking: st.talking})
		st.mu.Unlock()
	}
	if d := pub.dataStream(); d != nil {
		m.Streams = append(m.Streams, wireStream{Mid: d.mid, MIndex: d.mindex, Kind: wireData})
	}
	return m
}

// onEvent takes a room event from the owner.
func (cr *clusterRoom) onEvent(env cluster.Envelope) {
	c := cr.c
	if env.From == c.self {
		return // the owner applied its own events as it made them
	}
	cr.mu.Lock()
	if env.Epoch < cr.epoch {
		cr.mu.Unlock()
		c.log.Debug("stale room event", "room", cr.r.id, "epoch", env.Epoch, "current", cr.epoch)
		return
	}
	cr.epoch = env.Epoch
	cr.mu.Unlock()
	v, err := decodeRoomEvent(env.Kind, env.Body)
	if err != nil {
		c.log.Warn("bad videoroom room event", "room", cr.r.id, "from", env.From, "err", err)
		return
	}
	switch v := v.(type) {
	case wireMember:
		c.applyMember(cr.r, v, false)
	case wireEvent:
		if v.Node != c.self {
			cr.r.notifyHere(v.Event)
		}
	case wireState:
		if v.Room == cr.r.id {
			c.applyState(cr, v)
		}
	case wireNotice:
		c.applyNotice(cr, v)
	}
}

// applyMember takes a participant's change (or departure) announced by its node; with notify,
// the participants here hear of what they would not otherwise (a re-announced room). It reports
// whether anything was applied.
func (c *clusterNode) applyMember(r *room, m wireMember, notify bool) bool {
	if m.Node == c.self {
		return false // this node is its participants' authority
	}
	if m.Gone {
		return c.dropRemote(r, m.ID, m.Node, notify)
	}
	r.mu.Lock()
	if r.participants[m.ID] != nil {
		r.mu.Unlock()
		c.log.Warn("another node announces the id of a participant here", "room", r.id, "id", m.ID, "node", m.Node)
		return false
	}
	pub := r.remote[m.ID]
	added := pub == nil
	if added {
		pub = newRemote(r, m.Node, m)
		r.remote[m.ID] = pub
	}
	r.mu.Unlock()
	if pub.node != m.Node {
		c.log.Warn("two nodes announce one participant id", "room", r.id, "id", m.ID, "nodes", []string{pub.node, m.Node})
		return false
	}
	was := !added && pub.isActive()
	if !added {
		pub.setRemote(m)
	}
	now := pub.isActive()
	if was && !now {
		c.feedEnded(pub)
	}
	if !notify {
		return true
	}
	if added && r.options().notifyJoining {
		r.notifyHere(mustJSON(map[string]any{short: "event", "room": r.id, "joining": pub.identity()}))
	}
	if now && !was {
		r.notifyHere(mustJSON(map[string]any{short: "event", "room": r.id, "publishers": []map[string]any{pub.describe()}}))
	}
	if was && !now {
		r.notifyHere(mustJSON(map[string]any{short: "event", "room": r.id, "unpublished": pub.id}))
	}
	return true
}

// dropRemote removes another node's participant; with notify the participants here hear that
// it unpublished and left (its node is gone, or the owner's room no longer has it).
func (c *clusterNode) dropRemote(r *room, id uint64, node string, notify bool) bool {
	r.mu.Lock()
	pub := r.remote[id]
	if pub == nil || pub.node != node {
		r.mu.Unlock()
		return false
	}
	delete(r.remote, id)
	r.mu.Unlock()
	active := pub.isActive()
	c.feedEnded(pub)
	if notify {
		if active {
			r.notifyHere(mustJSON(map[string]any{short: "event", "room": r.id, "unpublished": id}))
		}
		ev := map[string]any{short: "event", "room": r.id, "leaving": id}
		if d := pub.identity()["display"]; d != nil {
			ev["display"] = d
		}
		r.notifyHere(mustJSON(ev))
	}
	return true
}

// replaceNode takes a node's re-announced participants: those it no longer has are gone.
func (c *clusterNode) replaceNode(r *room, node string, members []wireMember) {
	keep := map[uint64]bool{}
	for _, m := range members {
		m.Node = node
		if c.applyMember(r, m, true) {
			keep[m.ID] = true
		}
	}
	for _, pub := range r.everyone() {
		if pub.node == node && !keep[pub.id] {
			c.dropRemote(r, pub.id, node, true)
		}
	}
}

// applyState takes the room as its owner holds it.
func (c *clusterNode) applyState(cr *clusterRoom, st wireState) {
	r := cr.r
	c.setOptions(r, st.Options.options())
	byNode := map[string][]wireMember{}
	for _, n := range st.Nodes {
		byNode[n] = []wireMember{}
	}
	for _, m := range st.Members {
		if _, listed := byNode[m.Node]; listed {
			byNode[m.Node] = append(byNode[m.Node], m)
		}
	}
	for node, members := range byNode {
		if node != c.self {
			c.replaceNode(r, node, members)
		}
	}
}

// setOptions takes a room's options from its owner; recordings follow the room's record.
func (c *clusterNode) setOptions(r *room, o roomOptions) {
	r.mu.Lock()
	changed := r.opts.record != o.record
	r.opts = o
	r.mu.Unlock()
	if changed {
		for _, pub := range r.members() {
			pub.setRecording(o.record)
		}
	}
}

// onNode follows the membership: a node that is gone takes its participants with it, on every
// node at once (no owner needed: each node drops them from its own copy).
func (c *clusterNode) onNode(ev cluster.NodeEvent) {
	switch ev.Kind {
	case cluster.NodeGone:
		go c.nodeGone(ev.Node.ID)
	case cluster.NodeUp:
		go c.fetchRooms()
	}
}

func (c *clusterNode) nodeGone(node string) {
	if node == c.self {
		return
	}
	for _, r := range c.p.roomList() {
		for _, pub := range r.everyone() {
			if pub.node == node {
				c.dropRemote(r, pub.id, node, true)
			}
		}
		if cr := r.cl.Load(); cr != nil {
			cr.mu.Lock()
			delete(cr.synced, node)
			cr.mu.Unlock()
		}
	}
}

// onRoomsEvent learns a room created on another node.
func (c *clusterNode) onRoomsEvent(env cluster.Envelope) {
	if env.From == c.self {
		return
	}
	v, err := decodeRoomEvent(env.Kind, env.Body)
	if err != nil {
		c.log.Warn("bad videoroom rooms event", "from", env.From, "err", err)
		return
	}
	if w, ok := v.(wireRoom); ok {
		c.adopt(w.Room, w.Options)
	}
}

// adopt makes a copy of a room another node created (unless this node has it) and follows it.
func (c *clusterNode) adopt(id uint64, o wireOptions) *clusterRoom {
	c.p.mu.Lock()
	r := c.p.rooms[id]
	if r == nil {
		r = newRoom(id, o.options())
		c.p.rooms[id] = r
	}
	c.p.mu.Unlock()
	return c.follow(r)
}

// knownRooms are this node's rooms, for a node that starts.
func (c *clusterNode) knownRooms() []wireRoom {
	out := []wireRoom{}
	for _, r := range c.p.roomList() {
		if r.cl.Load() != nil {
			out = append(out, wireRoom{Room: r.id, Options: r.options().wire()})
		}
	}
	return out
}

// fetchRooms learns the rooms the other nodes know (at start, and after missed announcements).
func (c *clusterNode) fetchRooms() {
	cluster.CallOthers(c.ctx, c.view, clusterPath, ownerRequest{Op: opRooms}, 2*time.Second, func(node string, ans ownerAnswer, err error) {
		if err != nil {
			c.log.Debug("fetching a node's rooms", "node", node, "err", err)
			return
		}
		if len(ans.Rooms) > maxWireRooms {
			return
		}
		for _, w := range ans.Rooms {
			if w.Room != 0 && w.Options.check() == nil {
				c.adopt(w.Room, w.Options)
			}
		}
	})
}
