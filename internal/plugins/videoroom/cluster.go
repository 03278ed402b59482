package videoroom

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// Rooms that span nodes (docs/CLUSTER.md). Every node keeps a copy of every room: its own
// participants (with their sessions) and the other nodes' (room.remote, as they announced them).
// One node, the room's owner (a lease with a fencing epoch: View.Owner), serialises what concerns
// the room as a whole — admissions with their limits and feed ids, the publisher limit, kicks,
// moderation, edit and destroy — and publishes the room's events, in order and stamped with its
// epoch, on the room's topic. Each participant's own node stays its authority: it announces its
// participants' changes to the owner (one queue per room, in order) and carries out the owner's
// decisions about them. Janus events a node pushes to its own participants go to the others'
// participants through the owner too, so every node sees them in the same order.

// Relay carries a published feed's streams to the nodes that subscribe to it (*relay.Relay); a
// feed's id across the cluster is feedName's.
type Relay = relay.Feeds

// Option adjusts the plugin built by New.
type Option func(*Plugin)

// WithCluster makes rooms span the nodes of view; relay, when not nil, carries media between
// nodes (without it, subscribers only get feeds published on their own node). A nil view is one
// node, as without the option.
func WithCluster(view cluster.View, relay Relay) Option {
	return func(p *Plugin) {
		if view != nil {
			p.cl = &clusterNode{p: p, view: view, relay: relay, log: p.log.With("component", "cluster"), rooms: map[uint64]*clusterRoom{}}
		}
	}
}

// Timing of the cluster's requests; variables so that tests can shorten them.
var (
	// ownerWait bounds how long a request waits for a room to have an owner it can reach.
	ownerWait = 5 * time.Second
	// ownerRetry is the pause between two attempts to reach a room's owner.
	ownerRetry = 50 * time.Millisecond
	// subscribeSettle is how long a new subscription to a room's topic may take to be in effect.
	subscribeSettle = time.Second
)

const roomsTopic = "videoroom"

func roomTopic(id uint64) string { return "videoroom/" + strconv.FormatUint(id, 10) }

// feedName names a published feed across the cluster (the relay's feed id).
func feedName(room, id uint64) string { return fmt.Sprintf("videoroom/%d/%d", room, id) }

// clusterNode is the plugin's part of the cluster.
type clusterNode struct {
	p     *Plugin
	view  cluster.View
	relay Relay
	self  string
	log   *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	stop   []func()

	mu     sync.Mutex
	rooms  map[uint64]*clusterRoom
	closed bool // the plugin is destroyed: no room is followed any more
}

// clusterRoom follows one room: its owner, its topic, and what this node announces to the owner.
type clusterRoom struct {
	c     *clusterNode
	r     *room
	topic cluster.Topic
	unsub func()
	out   chan ownerRequest // announcements, sent to the owner in order
	// syncQueued: a re-announcement waits in out; overflow: out was full, an announcement was
	// lost, and the room is re-announced once out is empty.
	syncQueued, overflow atomic.Bool
	// admitMu keeps a re-announcement from overtaking an admission: the list of this node's
	// participants it sends is taken either before the owner admits one or after it is here.
	admitMu sync.Mutex
	// changed is signalled when the owner changes (a waiting request tries again).
	changed chan struct{}
	done    chan struct{}

	// ownerMu serialises the owner's decisions with the events that publish them.
	ownerMu sync.Mutex
	own     cluster.Ownership

	mu     sync.Mutex
	epoch  uint64 // the highest owner epoch seen: events of older ones are stale
	holder string
	// synced are, while this node owns the room, the nodes that re-announced their participants
	// to it at this epoch.
	synced map[string]bool
}

func (c *clusterNode) start() {
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.self = c.view.Self().ID
	c.view.Handle(clusterPath, c.handle)
	c.stop = append(c.stop, c.view.Watch(c.onNode))
	rooms := c.view.Topic(roomsTopic)
	c.stop = append(c.stop, rooms.Subscribe(c.onRoomsEvent, func(string) { go c.fetchRooms() }))
	for _, r := range c.p.roomList() {
		c.follow(r)
	}
	go c.fetchRooms()
	go cluster.AfterSettle(c.ctx, c.fetchRooms)
}

func (c *clusterNode) close() {
	c.cancel()
	for _, f := range c.stop {
		f()
	}
	c.mu.Lock()
	c.closed = true
	rooms := make([]*clusterRoom, 0, len(c.rooms))
	for _, cr := range c.rooms {
		rooms = append(rooms, cr)
	}
	c.mu.Unlock()
	for _, cr := range rooms {
		c.unfollow(cr)
	}
}

// follow starts following a room of this node's copy: its topic and its lease (which this
// node takes when nobody holds it, unless it drains).
func (c *clusterNode) follow(r *room) *clusterRoom {
	c.mu.Lock()
	cr, closed := c.rooms[r.id], c.closed
	c.mu.Unlock()
	if cr != nil || closed {
		return cr
	}
	cr = &clusterRoom{c: c, r: r, out: make(chan ownerRequest, 1024), changed: make(chan struct{}, 1), done: make(chan struct{}),
		topic: c.view.Topic(roomTopic(r.id)), own: c.view.Owner(roomTopic(r.id), true)}
	c.mu.Lock()
	if other := c.rooms[r.id]; other != nil || c.closed { // followed meanwhile, or destroyed
		c.mu.Unlock()
		_ = cr.own.Release(c.ctx)
		return other
	}
	c.rooms[r.id] = cr
	c.mu.Unlock()
	r.cl.Store(cr)
	cr.unsub = cr.topic.Subscribe(cr.onEvent, func(string) { cr.requestSync() })
	cr.own.OnChange(cr.onOwner) // called at once with the holder already known
	go cr.send()
	// Events published before the subscription took effect are lost without a gap (the topic
	// knows no sender yet): once it has, the room is taken again from its owner.
	time.AfterFunc(subscribeSettle, cr.requestSync)
	return cr
}

func (c *clusterNode) unfollow(cr *clusterRoom) {
	c.mu.Lock()
	if c.rooms[cr.r.id] != cr {
		c.mu.Unlock()
		return
	}
	delete(c.rooms, cr.r.id)
	c.mu.Unlock()
	close(cr.done)
	cr.unsub()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := cr.own.Release(ctx); err != nil {
		c.log.Debug("releasing a room's lease", "room", cr.r.id, "err", err)
	}
}

func (c *clusterNode) roomOf(id uint64) *clusterRoom {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rooms[id]
}

// owned reports whether this node acts as the room's owner now (a node cut off from the engine
// does not), and at which epoch.
func (cr *clusterRoom) owned() (uint64, bool) {
	l, mine := cr.own.Current()
	return l.Epoch, mine && cr.c.view.Connected()
}

// onOwner follows the lease: a new owner (or a new epoch) gets this node's participants again.
func (cr *clusterRoom) onOwner(l cluster.Lease, mine bool) {
	cr.mu.Lock()
	if l.Epoch < cr.epoch {
		cr.mu.Unlock()
		return
	}
	fresh := l.Epoch > cr.epoch || l.Holder != cr.holder
	cr.epoch, cr.holder = l.Epoch, l.Holder
	if mine && fresh {
		cr.synced = map[string]bool{cr.c.self: true}
	}
	cr.mu.Unlock()
	select {
	case cr.changed <- struct{}{}:
	default:
	}
	if fresh && l.Holder != "" {
		cr.c.log.Debug("room owner", "room", cr.r.id, "holder", l.Holder, "epoch", l.Epoch, "mine", mine)
		cr.requestSync()
	}
}

// ask sends a request to the room's owner — itself when it owns the room — waiting (ownerWait)
// for an owner that answers.
func (cr *clusterRoom) ask(ctx context.Context, req ownerRequest) (ownerAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, ownerWait)
	defer cancel()
	for {
		l, _ := cr.own.Current()
		if _, mine := cr.owned(); mine {
			if ans := cr.c.serve(ctx, cr.c.self, req); !ans.NotOwner {
				return ans, nil
			}
		} else if l.Holder != "" && l.Holder != cr.c.self {
			var ans ownerAnswer
			err := cr.c.view.Call(ctx, l.Holder, clusterPath, req, &ans)
			if err == nil && !ans.NotOwner {
				return ans, nil
			}
			if err != nil {
				cr.c.log.Debug("asking a room's owner", "room", cr.r.id, "owner", l.Holder, "op", req.Op, "err", err)
			}
		}
		select {
		case <-cr.changed:
		case <-time.After(ownerRetry):
		case <-ctx.Done():
			return ownerAnswer{}, fmt.Errorf("room %d: no owner answered: %w", cr.r.id, ctx.Err())
		}
	}
}

// askFor is ask for a client's request: a failure is the Janus error the client gets.
func (cr *clusterRoom) askFor(ctx context.Context, req ownerRequest) (ownerAnswer, *requestError) {
	ans, err := cr.ask(ctx, req)
	if err != nil {
		return ans, errorf(ErrUnknown, "The room's owner node is unavailable: %v", err)
	}
	return ans, ans.err()
}

// enqueue sends an announcement to the owner after those before it, without waiting (it is
// called on media goroutines too). A full queue drops it and re-announces everything instead.
func (cr *clusterRoom) enqueue(req ownerRequest) bool {
	select {
	case cr.out <- req:
		return true
	default:
		if !cr.overflow.Swap(true) {
			cr.c.log.Warn("videoroom cluster queue full: re-announcing the room", "room", cr.r.id)
		}
		return false
	}
}

// requestSync re-announces this node's participants to the owner, after the announcements
// queued before (an owner change, a gap in the room's events); one waits at a time.
func (cr *clusterRoom) requestSync() {
	if !cr.syncQueued.Swap(true) && !cr.enqueue(ownerRequest{Op: opSync}) {
		cr.syncQueued.Store(false)
	}
}

// send delivers the queued announcements in order.
func (cr *clusterRoom) send() {
	for {
		select {
		case <-cr.done:
			return
		case <-cr.c.ctx.Done():
			return
		case req := <-cr.out:
			if req.Op == opSync {
				cr.syncQueued.Store(false)
				cr.resync()
			} else if _, err := cr.ask(cr.c.ctx, req); err != nil {
				cr.c.log.Warn("videoroom cluster announcement lost", "room", cr.r.id, "op", req.Op, "err", err)
			}
			if len(cr.out) == 0 && cr.overflow.Swap(false) {
				cr.resync()
			}
		}
	}
}

// resync re-announces this node's participants to the owner, which publishes the whole room
// on its topic (not in its answer, which could arrive after later events). It runs on send's
// goroutine, after what was announced before.
func (cr *clusterRoom) resync() {
	cr.admitMu.Lock()
	defer cr.admitMu.Unlock()
	o := cr.r.options().wire()
	members := []wireMember{}
	for _, pub := range cr.r.members() {
		members = append(members, cr.c.wireOf(pub))
	}
	if _, err := cr.ask(cr.c.ctx, ownerRequest{Op: opSync, Room: cr.r.id, Members: members, Options: &o}); err != nil {
		cr.c.log.Warn("videoroom cluster re-announce", "room", cr.r.id, "err", err)
	}
}

// announce tells the owner what a participant of this node now is.
func (c *clusterNode) announce(pub *publisher) {
	if cr := pub.room.cl.Load(); cr != nil && pub.room.local(pub.id) == pub {
		m := c.wireOf(pub)
		cr.enqueue(ownerRequest{Op: opUpdate, Room: pub.room.id, Member: &m})
	}
}

// left tells the owner a participant of this node left.
func (c *clusterNode) left(pub *publisher) {
	if cr := pub.room.cl.Load(); cr != nil {
		cr.enqueue(ownerRequest{Op: opLeave, Room: pub.room.id, Member: &wireMember{ID: pub.id}})
	}
}

// forward sends a Janus event this node pushed to its participants to the other nodes'.
func (cr *clusterRoom) forward(data map[string]any) {
	raw, err := json.Marshal(data)
	if err != nil {
		return
	}
	cr.enqueue(ownerRequest{Op: opEvent, Room: cr.r.id, Body: raw})
}

// wireOf describes a participant of this node for the others.
func (c *clusterNode) wireOf(pub *publisher) wireMember {
	m := pub.wire()
	m.Node = c.self
	if c.relay == nil || !c.relay.CarriesData() { // the others could not subscribe to the data
		m.Streams = slices.DeleteFunc(m.Streams, func(st wireStream) bool { return st.Kind == wireData })
	}
	return m
}

// publish sends a room event stamped with the owner's epoch (ownerMu held).
func (cr *clusterRoom) publish(ctx context.Context, epoch uint64, kind string, body any) {
	if err := cr.topic.Publish(ctx, kind, epoch, body); err != nil {
		cr.c.log.Warn("publishing a room event", "room", cr.r.id, "kind", kind, "err", err)
	}
}

// handle serves the other nodes' requests (View.Handle).
func (c *clusterNode) handle(ctx context.Context, from string, raw json.RawMessage) (any, error) {
	req, err := decodeOwnerRequest(raw)
	if err != nil {
		c.log.Warn("bad videoroom cluster request", "from", from, "err", err)
		return nil, err
	}
	if from == "" || from == c.self {
		return nil, fmt.Errorf("videoroom cluster request from %q", from)
	}
	return c.serve(ctx, from, req), nil
}
