package audiobridge

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/relay"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// The seat's side: a participant of this node in a room mixed on another node.

// seat is, on a participant's node, its membership of a room mixed elsewhere: the session and
// its media stay here, the mixing is the owner's.
type seat struct {
	cr *clusterRoom

	mu       sync.Mutex
	md       *sessionMedia // the session's media, once attached
	exported bool          // its audio is offered to the relay
	mix      *relay.Import // the owner's mix for it
	mixFrom  string        // the node mix comes from
	pipe     *mixPipe
}

// mixPipe writes the owner's relayed mix into the session's own mix source, whose DownTrack
// sends it to the participant as a mix made here would be.
type mixPipe struct{ out *mixOut }

func (p *mixPipe) WriteRTP(pkt *sfu.Packet) {
	p.out.mu.Lock()
	p.out.src.Write(pkt.Payload(), pkt.Header.Timestamp, false, pkt.At)
	p.out.mu.Unlock()
}

func (p *mixPipe) Resync() {}

// mixedElsewhere reports whether room r is mixed on another node (false without a cluster),
// waiting for the room to have an owner.
func (p *Plugin) mixedElsewhere(r *room) (*clusterRoom, bool, *Error) {
	if p.cl == nil {
		return nil, false, nil
	}
	cr := p.cl.follow(r)
	local, err := cr.local(p.cl.ctx)
	return cr, !local, err
}

// joinSeat has the owner admit a participant of this session (a join, or a changeroom's),
// then seats it here.
func (cr *clusterRoom) joinSeat(s *session, j *Join, changeroom bool) (*member, any, *Error) {
	if j.RTP != nil {
		return nil, nil, errorf(ErrUnauthorized, "Plain RTP participants join room %d on the node that mixes it", cr.r.id)
	}
	ans, err := cr.askFor(s.q.Context(), ownerRequest{Op: opJoin, Room: cr.r.id, Join: j, ChangeRoom: changeroom})
	if err != nil {
		return nil, nil, err
	}
	var joined struct {
		ID uint64 `json:"id"`
	}
	if json.Unmarshal(ans.Data, &joined) != nil || joined.ID == 0 || ans.Participant == nil {
		return nil, nil, errorf(ErrUnknown, "The room's owner node gave no participant id")
	}
	m, err := newMember(s, cr.r, joined.ID, *ans.Participant, j.Display)
	if err != nil {
		go func() { _, _ = cr.ask(cr.c.ctx, ownerRequest{Op: opLeave, Room: cr.r.id, ID: joined.ID}) }()
		return nil, nil, err
	}
	m.admin = ans.Admin
	m.group.Store(cr.r.groupIndex(j.Group))
	m.record = j.Record
	if j.Filename != nil {
		m.filename = *j.Filename
	}
	m.seat.Store(&seat{cr: cr})
	cr.r.mu.Lock()
	cr.r.seats[m.id] = m
	cr.r.mu.Unlock()
	cr.learn(ans.Data)
	cr.know(m.id)
	return m, json.RawMessage(ans.Data), nil
}

// attach offers the participant's audio to the relay and has the owner mix it.
func (st *seat) attach(m *member, md *sessionMedia) error {
	if err := st.export(m, md); err != nil {
		return err
	}
	m.syncRecording()
	if st.cr.c.relay != nil {
		go st.connect(m)
	}
	return nil
}

// export offers the participant's audio to the relay.
func (st *seat) export(m *member, md *sessionMedia) error {
	rl := st.cr.c.relay
	if rl != nil {
		err := rl.Export(inFeed(m.room.id, m.id), []relay.Stream{{Mid: relayMid, Codec: media.Capability(md.codec, ""),
			PayloadType: md.pt, Layers: 1, Receiver: md.recv}})
		if err != nil {
			return err
		}
	}
	st.mu.Lock()
	st.md, st.exported = md, rl != nil
	st.mu.Unlock()
	return nil
}

// connect asks the owner to mix the participant's audio, and imports its mix.
func (st *seat) connect(m *member) {
	ans, err := st.cr.askFor(st.cr.c.ctx, ownerRequest{Op: opMedia, Room: m.room.id, ID: m.id})
	if err != nil {
		st.cr.c.log.Warn("audiobridge participant's audio not mixed", "room", m.room.id, "id", m.id, "err", err)
		return
	}
	st.importMix(m, ans.Node)
}

// importMix receives the participant's mix from the owner node.
func (st *seat) importMix(m *member, owner string) {
	st.mu.Lock()
	same := st.mix != nil && st.mixFrom == owner
	st.mu.Unlock()
	if same || owner == "" {
		return
	}
	ctx, cancel := context.WithTimeout(st.cr.c.ctx, ownerWait)
	defer cancel()
	imp, err := st.cr.c.relay.Import(ctx, owner, mixFeed(m.room.id, m.id))
	if err != nil {
		st.cr.c.log.Warn("audiobridge participant's mix not relayed", "room", m.room.id, "id", m.id, "owner", owner, "err", err)
		return
	}
	recv := imp.Receivers()[relayMid]
	st.mu.Lock()
	if st.md == nil || recv == nil {
		st.mu.Unlock()
		imp.Release()
		return
	}
	old := st.mix
	pipe := &mixPipe{out: st.md.out}
	st.mix, st.mixFrom, st.pipe = imp, owner, pipe
	st.mu.Unlock()
	if old != nil {
		old.Release()
	}
	recv.AddSink(pipe)
	imp.OnGone(func() {
		st.mu.Lock()
		current := st.mix == imp
		if current {
			st.mix, st.mixFrom, st.pipe = nil, "", nil
		}
		st.mu.Unlock()
		if current {
			imp.Release()
		}
	})
}

// detach stops relaying the participant's audio and mix.
func (st *seat) detach(m *member) {
	st.mu.Lock()
	exported, mix := st.exported, st.mix
	st.md, st.exported, st.mix, st.mixFrom, st.pipe = nil, false, nil, "", nil
	st.mu.Unlock()
	if exported {
		st.cr.c.relay.Unexport(inFeed(m.room.id, m.id))
	}
	if mix != nil {
		mix.Release()
	}
}

// leaveSeat takes a seat out of the room here and, when tell, at the owner.
func (r *room) leaveSeat(m *member, st *seat, tell bool) {
	r.mu.Lock()
	if r.seats[m.id] != m {
		r.mu.Unlock()
		return
	}
	delete(r.seats, m.id)
	r.mu.Unlock()
	m.detach()
	if tell {
		go func() {
			if _, err := st.cr.ask(st.cr.c.ctx, ownerRequest{Op: opLeave, Room: r.id, ID: m.id}); err != nil {
				st.cr.c.log.Warn("audiobridge leave not told to the owner", "room", r.id, "id", m.id, "err", err)
			}
		}()
	}
}

// seatList lists the room's seats on this node, by id.
func (r *room) seatList() []*member {
	r.mu.Lock()
	out := make([]*member, 0, len(r.seats))
	for _, m := range r.seats {
		out = append(out, m)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// dropSeat carries out the owner's decision to take a participant of this node out (kick).
func (cr *clusterRoom) dropSeat(ev dropEvent) {
	cr.r.mu.Lock()
	m := cr.r.seats[ev.ID]
	cr.r.mu.Unlock()
	st := m.seatOf()
	if st == nil {
		return
	}
	if len(ev.Data) > 0 {
		m.s.push("", ev.Data, nil)
	}
	cr.mu.Lock()
	delete(cr.known, m.id)
	cr.mu.Unlock()
	m.s.forgetMember(m)
	cr.r.leaveSeat(m, st, false)
	if ev.Close {
		m.s.h.ClosePeer("kicked from the audiobridge")
	}
}

// wire describes a seat for a (new) owner.
func (m *member) wire() wireSeat {
	m.mu.Lock()
	w := wireSeat{Join: Join{Room: m.room.id, ID: m.id, Display: m.display, Codec: &m.settings.Codec},
		Participant: m.settings, Admin: m.admin, Setup: m.setup.Load()}
	m.mu.Unlock()
	if st := m.seatOf(); st != nil {
		st.mu.Lock()
		w.Media = st.exported
		st.mu.Unlock()
	}
	if g := m.group.Load(); g > 0 && int(g) <= len(m.room.opts.Groups) {
		name := m.room.opts.Groups[g-1]
		w.Join.Group = &name
	}
	return w
}

// reannounce tells the owner every seat of this node in the room (a new owner, or lost events),
// and imports the mixes of those with media from it.
func (cr *clusterRoom) reannounce() {
	if _, mine := cr.owned(); mine {
		return
	}
	seats := cr.r.seatList()
	if len(seats) == 0 {
		return
	}
	ws := make([]wireSeat, 0, len(seats))
	for _, m := range seats {
		ws = append(ws, m.wire())
	}
	ans, err := cr.askFor(cr.c.ctx, ownerRequest{Op: opSync, Room: cr.r.id, Seats: ws})
	if err != nil {
		cr.c.log.Warn("audiobridge seats not re-announced", "room", cr.r.id, "err", err)
		return
	}
	for i, m := range seats {
		if st := m.seatOf(); st != nil && ws[i].Media {
			st.importMix(m, ans.Node)
		}
	}
}

// takeOver makes this node's seats members of the room it now mixes: their audio goes to this
// node's mixer, their mixes come from it. The other nodes re-announce theirs.
func (cr *clusterRoom) takeOver() {
	// Give the lease a moment to settle: a takeover between two quick owner changes would
	// otherwise move the seats twice.
	time.Sleep(ownerRetry)
	epoch, mine := cr.owned()
	if !mine {
		return
	}
	defer func() { go cr.publishRoster(epoch) }()
	r := cr.r
	for _, m := range r.seatList() {
		st := m.seatOf()
		if st == nil {
			continue
		}
		st.mu.Lock()
		md := st.md
		st.mu.Unlock()
		r.mu.Lock()
		delete(r.seats, m.id)
		taken := r.members[m.id] != nil
		r.mu.Unlock()
		st.detach(m)
		m.seat.Store(nil)
		if taken {
			cr.c.log.Warn("audiobridge participant's id taken on the new owner", "room", r.id, "id", m.id)
			m.s.forgetMember(m)
			continue
		}
		r.mu.Lock()
		r.addLocked(m)
		r.mu.Unlock()
		if md != nil {
			if err := m.attach(md); err != nil {
				cr.c.log.Warn("audiobridge participant's audio not mixed", "room", r.id, "id", m.id, "err", err)
			}
		}
	}
}

// handOver is takeOver's reverse: this node no longer mixes the room (its lease lapsed while it
// was cut off from the engine, or it drained). Its guests leave here (their nodes re-join them
// to the new owner), and its WebRTC participants become seats, re-announced to the new owner
// once there is one. Plain-RTP participants cannot move: they stay in the mixer here.
func (cr *clusterRoom) handOver() {
	// A lease lost to an engine restart comes back to its last holder at once: wait for that
	// before moving anyone.
	time.Sleep(handOverWait)
	if _, mine := cr.owned(); mine {
		return
	}
	r := cr.r
	r.mu.Lock()
	if r.destroyed {
		r.mu.Unlock()
		return
	}
	members := make([]*member, 0, len(r.members))
	ids := make([]uint64, 0, len(r.members))
	for _, m := range r.members {
		members = append(members, m)
		ids = append(ids, m.id)
	}
	r.mu.Unlock()
	// What this node's participants know of the room is, now, its members (those who left while
	// this node mixed it were told then).
	cr.mu.Lock()
	cr.known = map[uint64]bool{}
	cr.mu.Unlock()
	cr.know(ids...)
	for _, m := range members {
		if m.guest != nil {
			r.leave(m, leaveSilently)
			continue
		}
		md := m.s.mediaOf()
		if md != nil && md.rtp != nil {
			continue
		}
		r.mu.Lock()
		if r.members[m.id] != m {
			r.mu.Unlock()
			continue
		}
		delete(r.members, m.id)
		r.changedLocked()
		r.seats[m.id] = m
		r.mu.Unlock()
		m.out.Store(nil)
		m.detachSink()
		st := &seat{cr: cr}
		m.seat.Store(st)
		if md != nil {
			if err := st.export(m, md); err != nil {
				cr.c.log.Warn("audiobridge participant's audio not relayed", "room", r.id, "id", m.id, "err", err)
			}
		}
	}
	cr.reannounce()
}
