package audiobridge

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/media"
)

// The owner's side: requests of the seats' nodes, and the guests' media.

// guest is, on the owner, a member whose session is on another node.
type guest struct {
	node string

	mu  sync.Mutex
	in  *relay.Import // the participant's audio, from its node
	out *mixOut       // its mix, exported to its node
}

// mixPT is the payload type of a relayed mix (the link rewrites it anyway).
const mixPT = DefaultRTPOpusPT

// serve answers a seat's node (from) as the room's owner.
func (c *clusterNode) serve(ctx context.Context, from string, req ownerRequest) ownerAnswer {
	if req.Op == opRooms {
		return ownerAnswer{Node: c.self, Rooms: c.knownRooms()}
	}
	r, err := c.p.room(req.Room)
	if err != nil {
		return failed(err)
	}
	cr := c.follow(r)
	if _, mine := cr.owned(); !mine {
		return ownerAnswer{NotOwner: true}
	}
	if from == c.self {
		// The room came to this node while one of its seats was asking: the seats became
		// members (takeOver); the participant asks again.
		return failed(errorf(ErrUnknown, "Room %d is now mixed on this node, try again", r.id))
	}
	ans := c.serveOp(ctx, from, r, cr, req)
	ans.Node = c.self
	return ans
}

func (c *clusterNode) serveOp(ctx context.Context, from string, r *room, cr *clusterRoom, req ownerRequest) ownerAnswer {
	if req.Op == opRequest {
		name, b, err := Decode(req.Body)
		if err != nil {
			return failed(err)
		}
		reply := c.p.handleSyncHere(nil, name, b)
		c.announce(name, reply)
		data, _ := json.Marshal(reply)
		return ownerAnswer{Data: data}
	}
	if req.Op == opJoin {
		return c.admitGuest(from, r, req.Join, req.ChangeRoom)
	}
	if req.Op == opSync {
		c.syncGuests(ctx, from, r, req.Seats)
		return ownerAnswer{}
	}
	m := r.guest(from, req.ID)
	if m == nil {
		return failed(errorf(ErrNoSuchUser, "No such user %d in room %d", req.ID, r.id))
	}
	switch req.Op {
	case opConfigure:
		conf := req.Configure
		conf.Record, conf.Filename = nil, nil // a guest's own recording is on its node
		if conf.Group != nil {
			if err := r.checkGroup(conf.Group, false); err != nil {
				return failed(err)
			}
			r.mu.Lock()
			m.group.Store(r.groupIndex(conf.Group))
			r.mu.Unlock()
		}
		notify, err := m.configure(conf)
		if err != nil {
			return failed(err)
		}
		if notify {
			r.changed(m, false)
		}
	case opSetup:
		r.setupChanged(m, req.Setup)
	case opMedia:
		if err := c.attachGuest(ctx, r, m); err != nil {
			return failed(errorf(ErrUnknown, "Relaying the participant's audio: %v", err))
		}
	case opLeave:
		r.leave(m, leaveNotice)
	case opReset:
		m.in.Resync()
	}
	return ownerAnswer{}
}

// admitGuest is a join (or a changeroom) of a participant of node from.
func (c *clusterNode) admitGuest(from string, r *room, j *Join, changeroom bool) ownerAnswer {
	j.RTP = nil
	resolve, event := j.NewParticipant, "joined"
	if changeroom {
		resolve, event = (&ChangeRoom{*j}).NewParticipant, "roomchanged"
	}
	set, admin, err := admit(j, r, true, resolve)
	if err != nil {
		return failed(err)
	}
	_, reply, err := r.enter(nil, from, j, set, admin, event)
	if err != nil {
		return failed(err)
	}
	data, _ := json.Marshal(reply)
	return ownerAnswer{Data: data, Participant: &set, Admin: admin}
}

// syncGuests makes the room's guests of node from what it announced: new ones join (the owner
// changed), those it no longer has leave, and the audio of those with media is relayed again.
func (c *clusterNode) syncGuests(ctx context.Context, from string, r *room, seats []wireSeat) {
	want := make(map[uint64]bool, len(seats))
	for _, st := range seats {
		want[st.Join.ID] = true
	}
	for _, m := range r.guestsOf(from) {
		if !want[m.id] {
			r.leave(m, leaveNotice)
		}
	}
	for _, st := range seats {
		m := r.guest(from, st.Join.ID)
		if m == nil {
			j := st.Join
			j.RTP = nil
			var err *Error
			if m, _, err = r.enter(nil, from, &j, st.Participant, st.Admin, "joined"); err != nil {
				c.log.Warn("audiobridge participant not re-admitted", "room", r.id, "id", st.Join.ID, "node", from, "err", err)
				continue
			}
		}
		if st.Setup {
			r.setupChanged(m, true)
		}
		if st.Media && !m.guest.relayed() { // a guest whose audio comes in already keeps it
			if err := c.attachGuest(ctx, r, m); err != nil {
				c.log.Warn("audiobridge participant's audio not relayed", "room", r.id, "id", m.id, "node", from, "err", err)
			}
		}
	}
}

// attachGuest imports a guest's audio into its mixer input and exports its mix.
func (c *clusterNode) attachGuest(ctx context.Context, r *room, m *member) error {
	if c.relay == nil {
		return errorf(ErrUnknown, "no relay between nodes")
	}
	g := m.guest
	imp, err := c.relay.Import(ctx, g.node, inFeed(r.id, m.id))
	if err != nil {
		return err
	}
	recv := imp.Receivers()[relayMid]
	if recv == nil {
		imp.Release()
		return errorf(ErrUnknown, "node %s relays no audio for participant %d", g.node, m.id)
	}
	out := newMixOut(m.codec, mixPT, nil)
	err = c.relay.Export(mixFeed(r.id, m.id), []relay.Stream{{Mid: relayMid, Codec: media.Capability(m.codec, ""),
		PayloadType: mixPT, Layers: 1, Receiver: out.src.Receiver()}})
	if err != nil {
		imp.Release()
		out.src.Close()
		return err
	}
	g.mu.Lock()
	oldIn, oldOut := g.in, g.out
	g.in, g.out = imp, out
	g.mu.Unlock()
	m.detachSink()
	if oldIn != nil {
		oldIn.Release()
	}
	if oldOut != nil {
		oldOut.src.Close()
	}
	if err := m.attachReceiver(recv, -1, out); err != nil {
		return err
	}
	imp.OnGone(func() {
		// The node unexported the audio (the participant left, or renegotiated) or the link
		// failed: the participant stays until it leaves or its node is gone.
		g.mu.Lock()
		current := g.in == imp
		if current {
			g.in = nil
		}
		g.mu.Unlock()
		if current {
			m.detachSink()
			imp.Release()
		}
	})
	return nil
}

// relayed reports whether the guest's audio is being imported.
func (g *guest) relayed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.in != nil
}

// close stops relaying a guest's media (it left).
func (g *guest) close(c *clusterNode, r *room, m *member) {
	g.mu.Lock()
	in, out := g.in, g.out
	g.in, g.out = nil, nil
	g.mu.Unlock()
	if out != nil {
		if c.relay != nil {
			c.relay.Unexport(mixFeed(r.id, m.id))
		}
		out.src.Close()
	}
	if in != nil {
		in.Release()
	}
}

// guest returns the room's member id if it is a guest of node.
func (r *room) guest(node string, id uint64) *member {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.members[id]; m != nil && m.guest != nil && m.guest.node == node {
		return m
	}
	return nil
}

// guestsOf lists the room's guests of node.
func (r *room) guestsOf(node string) []*member {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*member
	for _, m := range r.members {
		if m.guest != nil && m.guest.node == node {
			out = append(out, m)
		}
	}
	return out
}

// sinkConfig is the mixer input's configuration for a member's settings; pt -1 takes any
// payload type (a relayed stream's is the link's).
func (m *member) sinkConfig(set Participant, pt int) audio.SinkConfig {
	return audio.SinkConfig{
		AudioActivePackets: set.AudioActivePackets, AudioLevelAverage: set.AudioLevelAverage,
		OnTalk:      func(talking bool) { m.room.talkChanged(m, talking) },
		PayloadType: pt,
	}
}
