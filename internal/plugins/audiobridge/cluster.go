package audiobridge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// Rooms that span nodes (docs/CLUSTER.md). A room is mixed on one node, its owner (the holder of
// the lease "audiobridge/<room>", View.Owner). A participant whose session is on another node
// joins there as on one node; that node (the participant's) keeps a seat for it — the session,
// its PeerConnection, its place in no mixer — and sends the room-level part of its requests to the
// owner: join (ids, limits, pin, token, secret and group checks), configure, leave, and the
// synchronous requests about the room (listparticipants, kick, mute...). The owner holds the
// participant as a guest member of the room, mixed like a local one: the seat's node exports
// the participant's audio Receiver to the relay, the owner imports it into the guest's mixer
// input and exports the guest's mix (its LocalSource's Receiver), which the seat's node imports
// and sends to the participant on the session's own DownTrack. The owner's room events go to
// its own participants and, stamped with its epoch, on the topic "audiobridge/<room>" to the
// other nodes, which push them to their seats.

// Relay carries audio between nodes (*relay.Relay).
type Relay = relay.Feeds

// Option adjusts the plugin built by New.
type Option func(*Plugin)

// WithCluster makes rooms span the nodes of view, with rl carrying the audio between them. A nil
// view is one node, as without the option.
func WithCluster(view cluster.View, rl Relay) Option {
	return func(p *Plugin) {
		if view != nil {
			p.cl = &clusterNode{p: p, view: view, relay: rl, log: p.log.With("component", "cluster"),
				rooms: map[uint64]*clusterRoom{}, apiRooms: map[uint64]bool{}}
		}
	}
}

// Timing of the owner protocol; variables so that tests can shorten them.
var (
	// ownerWait bounds how long a request waits for a room's owner to answer.
	ownerWait = 5 * time.Second
	// ownerRetry is the pause between two attempts to reach it.
	ownerRetry = 50 * time.Millisecond
	// rosterSettle is how long a new owner waits for the nodes to re-announce their participants
	// before it publishes its roster (and the participants nobody re-announced leave).
	rosterSettle = time.Second
	// handOverWait is how long a node that lost a room's lease waits for it to come back (an
	// engine that restarted forgot the lease; its last holder takes it again at once) before it
	// hands the room's participants over.
	handOverWait = 500 * time.Millisecond
)

// ownerPath is the owner protocol's path on the cluster listener.
const ownerPath = "/audiobridge/owner"

// roomName is a room's lease and topic.
func roomName(id uint64) string { return "audiobridge/" + strconv.FormatUint(id, 10) }

// The relay's feeds of a participant: its audio from its node, its mix from the owner.
func inFeed(room, id uint64) string  { return fmt.Sprintf("audiobridge/%d/%d/in", room, id) }
func mixFeed(room, id uint64) string { return fmt.Sprintf("audiobridge/%d/%d/mix", room, id) }

// relayMid names the one stream of a participant's feeds.
const relayMid = "audio"

// clusterNode is the plugin's part of the cluster.
type clusterNode struct {
	p     *Plugin
	view  cluster.View
	relay Relay
	self  string
	log   *slog.Logger

	ctx       context.Context
	cancel    context.CancelFunc
	stopWatch func()
	stopRooms func()

	mu    sync.Mutex
	rooms map[uint64]*clusterRoom
	// created are the rooms created through the API (here or on another node), which a node
	// that starts learns from the others.
	apiRooms map[uint64]bool
}

// clusterRoom follows one room: its lease, its topic, and the owner's events to publish.
type clusterRoom struct {
	c     *clusterNode
	r     *room
	own   cluster.Ownership
	topic cluster.Topic
	unsub func()
	out   chan outEvent // the owner's events, published in order
	done  chan struct{}

	mu     sync.Mutex
	epoch  uint64 // the highest owner epoch seen: events of older ones are stale
	holder string
	mine   bool // this node mixed the room at the last change
	// known are the participants this node's seats were told of (by the owner's replies and
	// events): after an owner change, those missing from the new owner's roster have left.
	known map[uint64]bool
}

// outEvent is one room event the owner publishes.
type outEvent struct {
	kind string
	body any
}

func (c *clusterNode) start() {
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.self = c.view.Self().ID
	c.view.Handle(ownerPath, c.handle)
	c.stopWatch = c.view.Watch(func(ev cluster.NodeEvent) {
		switch ev.Kind {
		case cluster.NodeGone:
			go c.nodeGone(ev.Node.ID)
		case cluster.NodeUp:
			go c.fetchRooms()
		}
	})
	c.startRooms()
}

func (c *clusterNode) close() {
	c.cancel()
	c.stopWatch()
	c.stopRooms()
	c.mu.Lock()
	rooms := make([]*clusterRoom, 0, len(c.rooms))
	for _, cr := range c.rooms {
		rooms = append(rooms, cr)
	}
	c.rooms = map[uint64]*clusterRoom{}
	c.mu.Unlock()
	for _, cr := range rooms {
		cr.stop()
	}
}

// stop stops following the room: its topic, its events and its lease.
func (cr *clusterRoom) stop() {
	close(cr.done)
	cr.unsub()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := cr.own.Release(ctx); err != nil {
		cr.c.log.Debug("releasing a room's lease", "room", cr.r.id, "err", err)
	}
}

// follow starts following a room (once): its lease, which this node takes when it is free, and
// its topic.
func (c *clusterNode) follow(r *room) *clusterRoom {
	// Set up under c.mu (nothing here waits or calls back into c): a concurrent follow of the same
	// room gets it whole.
	c.mu.Lock()
	defer c.mu.Unlock()
	if cr := c.rooms[r.id]; cr != nil {
		return cr
	}
	cr := &clusterRoom{c: c, r: r, out: make(chan outEvent, 1024), done: make(chan struct{}), known: map[uint64]bool{}}
	cr.own = c.view.Owner(roomName(r.id), true)
	cr.own.OnChange(cr.onOwner)
	cr.topic = c.view.Topic(roomName(r.id))
	cr.unsub = cr.topic.Subscribe(cr.onEvent, func(from string) {
		c.log.Info("audiobridge room events lost: re-announcing the seats", "room", r.id, "from", from)
		go cr.reannounce()
	})
	go cr.publish()
	c.rooms[r.id] = cr
	r.cl.Store(cr)
	return cr
}

func (c *clusterNode) followed() []*clusterRoom {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*clusterRoom, 0, len(c.rooms))
	for _, cr := range c.rooms {
		out = append(out, cr)
	}
	return out
}

// owned reports whether this node mixes the room now, and at which epoch.
func (cr *clusterRoom) owned() (uint64, bool) {
	l, mine := cr.own.Current()
	return l.Epoch, mine && cr.c.view.Connected()
}

// local waits (ownerWait) until the room has an owner and reports whether it is this node.
func (cr *clusterRoom) local(ctx context.Context) (bool, *Error) {
	ctx, cancel := context.WithTimeout(ctx, ownerWait)
	defer cancel()
	for {
		l, _ := cr.own.Current()
		if _, mine := cr.owned(); mine {
			return true, nil
		}
		if l.Holder != "" && l.Holder != cr.c.self {
			return false, nil
		}
		select {
		case <-time.After(ownerRetry / 2):
		case <-ctx.Done():
			return false, errorf(ErrUnknown, "Room %d has no owner node: %v", cr.r.id, ctx.Err())
		}
	}
}

// onOwner follows the lease: seats are announced again to a new owner, and become members of
// the room here when this node is the new owner.
func (cr *clusterRoom) onOwner(l cluster.Lease, mine bool) {
	cr.mu.Lock()
	if l.Epoch < cr.epoch {
		cr.mu.Unlock()
		return
	}
	fresh := l.Epoch > cr.epoch || l.Holder != cr.holder
	lost := cr.mine && !mine
	cr.epoch, cr.holder, cr.mine = l.Epoch, l.Holder, mine
	cr.mu.Unlock()
	if lost {
		go cr.handOver()
		return
	}
	if !fresh || l.Holder == "" {
		return
	}
	cr.c.log.Debug("audiobridge room owner", "room", cr.r.id, "holder", l.Holder, "epoch", l.Epoch, "mine", mine)
	if mine {
		go cr.takeOver()
	} else {
		go cr.reannounce()
	}
}

// ask sends a request to the room's owner (itself when it owns the room).
func (cr *clusterRoom) ask(ctx context.Context, req ownerRequest) (ownerAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, ownerWait)
	defer cancel()
	return cluster.AskOwner(ctx, cr.c.view, cr.own, ownerPath, req,
		func(ctx context.Context) ownerAnswer { return cr.c.serve(ctx, cr.c.self, req) },
		func(a ownerAnswer) bool { return a.NotOwner }, ownerRetry)
}

// askFor is ask for a participant's request: a failure is the Janus error it gets.
func (cr *clusterRoom) askFor(ctx context.Context, req ownerRequest) (ownerAnswer, *Error) {
	ans, err := cr.ask(ctx, req)
	if err != nil {
		return ans, errorf(ErrUnknown, "The room's owner node is unavailable: %v", err)
	}
	if ans.Code != 0 {
		return ans, errorf(ans.Code, "%s", ans.Reason)
	}
	return ans, nil
}

// emit publishes a room event of the owner to the other nodes' participants, except the
// participant with id except (0: none). It does not wait: it runs on media goroutines too.
func (cr *clusterRoom) emit(data any, except uint64) {
	if _, mine := cr.owned(); !mine {
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return
	}
	cr.enqueue(outEvent{kind: kindEvent, body: roomEvent{Room: cr.r.id, Except: except, Data: raw}})
}

// drop tells a seat's node that its participant is out of the room (kicked); data, when not nil,
// is pushed to it first, and closePeer hangs its PeerConnection up.
func (cr *clusterRoom) drop(node string, id uint64, data any, closePeer bool) {
	var raw json.RawMessage
	if data != nil {
		raw, _ = json.Marshal(data)
	}
	cr.enqueue(outEvent{kind: kindDrop, body: dropEvent{Room: cr.r.id, Node: node, ID: id, Data: raw, Close: closePeer}})
}

func (cr *clusterRoom) enqueue(ev outEvent) {
	select {
	case cr.out <- ev:
	default:
		cr.c.log.Warn("audiobridge room events queue full: event dropped", "room", cr.r.id, "kind", ev.kind)
	}
}

// publish sends the owner's events in order, each stamped with the epoch it holds the room at.
func (cr *clusterRoom) publish() {
	for {
		select {
		case <-cr.done:
			return
		case ev := <-cr.out:
			epoch, mine := cr.owned()
			if !mine {
				continue
			}
			ctx, cancel := context.WithTimeout(cr.c.ctx, ownerWait)
			if err := cr.topic.Publish(ctx, ev.kind, epoch, ev.body); err != nil {
				cr.c.log.Warn("publishing an audiobridge room event", "room", cr.r.id, "kind", ev.kind, "err", err)
			}
			cancel()
		}
	}
}

// onEvent delivers the owner's events to this node's seats.
func (cr *clusterRoom) onEvent(env cluster.Envelope) {
	cr.mu.Lock()
	stale := env.Epoch < cr.epoch || (cr.holder != "" && env.Epoch == cr.epoch && env.From != cr.holder)
	cr.mu.Unlock()
	if stale {
		return
	}
	switch env.Kind {
	case kindEvent:
		ev, err := decodeRoomEvent(env.Body)
		if err != nil || ev.Room != cr.r.id {
			cr.c.log.Warn("bad audiobridge room event", "room", cr.r.id, "from", env.From, "err", err)
			return
		}
		cr.learn(ev.Data)
		for _, m := range cr.r.seatList() {
			if m.id != ev.Except {
				m.s.push("", ev.Data, nil)
			}
		}
	case kindRoster:
		ev, err := decodeRosterEvent(env.Body)
		if err != nil || ev.Room != cr.r.id {
			cr.c.log.Warn("bad audiobridge roster event", "room", cr.r.id, "from", env.From, "err", err)
			return
		}
		cr.reconcile(ev.IDs, cr.r.seatList())
	case kindDrop:
		ev, err := decodeDropEvent(env.Body)
		if err != nil || ev.Room != cr.r.id {
			cr.c.log.Warn("bad audiobridge drop event", "room", cr.r.id, "from", env.From, "err", err)
			return
		}
		if ev.Node == cr.c.self {
			cr.dropSeat(ev)
		}
	}
}

// handle serves the other nodes' requests (View.Handle).
func (c *clusterNode) handle(ctx context.Context, from string, raw json.RawMessage) (any, error) {
	req, err := decodeOwnerRequest(raw)
	if err != nil {
		c.log.Warn("bad audiobridge cluster request", "from", from, "err", err)
		return nil, err
	}
	if from == "" || from == c.self {
		return nil, fmt.Errorf("audiobridge cluster request from %q", from)
	}
	return c.serve(ctx, from, req), nil
}

// nodeGone takes a gone node's participants out of the rooms this node mixes.
func (c *clusterNode) nodeGone(node string) {
	for _, cr := range c.followed() {
		if _, mine := cr.owned(); !mine {
			continue
		}
		for _, m := range cr.r.guestsOf(node) {
			c.log.Info("audiobridge participant's node gone", "room", cr.r.id, "id", m.id, "node", node)
			cr.r.leave(m, leaveNotice)
		}
	}
}

// learn notes the participants an event (or a join's reply) tells this node's seats of.
func (cr *clusterRoom) learn(data []byte) {
	var ev struct {
		Participants []struct {
			ID uint64 `json:"id"`
		} `json:"participants"`
		Leaving   *uint64 `json:"leaving"`
		Kicked    *uint64 `json:"kicked"`
		KickedAll *uint64 `json:"kicked_all"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for _, p := range ev.Participants {
		cr.known[p.ID] = true
	}
	for _, id := range []*uint64{ev.Leaving, ev.Kicked, ev.KickedAll} {
		if id != nil {
			delete(cr.known, *id)
		}
	}
}

// know notes participants this node's seats know of without an event (their own ids, the
// members of a room this node handed over).
func (cr *clusterRoom) know(ids ...uint64) {
	cr.mu.Lock()
	for _, id := range ids {
		cr.known[id] = true
	}
	cr.mu.Unlock()
}

// reconcile tells this node's participants (to) that those they know of and the new owner's
// roster lacks have left: their node died with the old owner, or never re-joined.
func (cr *clusterRoom) reconcile(roster []uint64, to []*member) {
	in := make(map[uint64]bool, len(roster))
	for _, id := range roster {
		in[id] = true
	}
	var gone []uint64
	cr.mu.Lock()
	for id := range cr.known {
		if !in[id] {
			gone = append(gone, id)
			delete(cr.known, id)
		}
	}
	cr.mu.Unlock()
	for _, id := range gone {
		cr.c.log.Info("audiobridge participant not re-joined to the room's new owner: left", "room", cr.r.id, "id", id)
		ev := RoomEvent{Audiobridge: "event", Room: cr.r.id, Leaving: &id}
		for _, m := range to {
			m.s.push("", ev, nil)
		}
	}
}

// publishRoster is a new owner's: once the nodes had time to re-announce their participants,
// every node's participants learn who did not come back.
func (cr *clusterRoom) publishRoster(epoch uint64) {
	select {
	case <-time.After(rosterSettle):
	case <-cr.done:
		return
	}
	if e, mine := cr.owned(); !mine || e != epoch {
		return
	}
	r := cr.r
	r.mu.Lock()
	ids := make([]uint64, 0, len(r.members))
	var local []*member
	for id, m := range r.members {
		ids = append(ids, id)
		if m.s != nil {
			local = append(local, m)
		}
	}
	r.mu.Unlock()
	cr.reconcile(ids, local)
	cr.enqueue(outEvent{kind: kindRoster, body: rosterEvent{Room: r.id, IDs: ids}})
}
