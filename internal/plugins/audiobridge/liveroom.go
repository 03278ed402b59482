package audiobridge

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/audio"
)

// room is a live room: its options, its members, and the mixer that runs while it has any.
type room struct {
	id uint64
	p  *Plugin

	mu         sync.Mutex // guards everything below but roster
	opts       RoomOptions
	mutedAll   atomic.Bool // mute_room: every member but the admins is muted (read by the mixer)
	destroyed  bool
	members    map[uint64]*member
	joins      uint64 // orders the roster by join
	forwarders map[uint32]*mixForwarder
	files      map[string]*announcement
	recording  *mixRecording
	mixer      *mixLoop // running while the room has members, forwarders or files
	// seats are this node's participants while the room is mixed on another node (cluster).
	seats map[uint64]*member

	cl atomic.Pointer[clusterRoom] // the room in the cluster, once followed (nil: one node)

	// roster is what the mixer reads each tick without a lock: rebuilt on every change.
	roster atomic.Pointer[roster]
}

// roster is one consistent view of what a tick mixes and sends.
type roster struct {
	members    []*member
	files      []*announcement
	forwarders []*mixForwarder
	groups     []int // the groups (1-based) some forwarder sends the mix of
	recording  *mixRecording
}

func newRoom(p *Plugin, id uint64, opts RoomOptions) *room {
	r := &room{id: id, p: p, opts: opts, members: map[uint64]*member{}, seats: map[uint64]*member{},
		forwarders: map[uint32]*mixForwarder{}, files: map[string]*announcement{}}
	r.roster.Store(&roster{})
	return r
}

// format is the room's mixing format: its rate, stereo when spatial.
func (r *room) format() audio.Format {
	ch := 1
	if r.opts.SpatialAudio {
		ch = 2
	}
	return audio.Format{Rate: r.opts.SamplingRate, Channels: ch}
}

// changedLocked rebuilds the roster and starts or stops the mixer; r.mu is held.
func (r *room) changedLocked() {
	next := &roster{recording: r.recording}
	for _, m := range r.members {
		next.members = append(next.members, m)
	}
	sort.Slice(next.members, func(i, j int) bool { return next.members[i].order < next.members[j].order })
	for _, f := range r.files {
		next.files = append(next.files, f)
	}
	for _, f := range r.forwarders {
		next.forwarders = append(next.forwarders, f)
		if f.group > 0 && !slices.Contains(next.groups, f.group) {
			next.groups = append(next.groups, f.group)
		}
	}
	r.roster.Store(next)
	busy := len(next.members) > 0 || len(next.files) > 0 || len(next.forwarders) > 0 || next.recording != nil
	switch {
	case busy && r.mixer == nil && !r.destroyed:
		r.mixer = startMixLoop(r)
	case !busy && r.mixer != nil:
		r.mixer.stop()
		r.mixer = nil
	}
}

// add makes m a member; the caller has checked the id is free.
func (r *room) addLocked(m *member) {
	r.joins++
	m.order = r.joins
	r.members[m.id] = m
	r.changedLocked()
}

// leave removes m (if still a member) and tells the others; how says whether m is told too.
func (r *room) leave(m *member, how leaveHow) {
	if st := m.seatOf(); st != nil {
		r.leaveSeat(m, st, true)
		return
	}
	r.mu.Lock()
	if r.members[m.id] != m {
		r.mu.Unlock()
		return
	}
	delete(r.members, m.id)
	r.changedLocked()
	r.mu.Unlock()
	m.detach()
	if how == leaveSilently {
		return
	}
	r.broadcast(RoomEvent{Audiobridge: "event", Room: r.id, Leaving: &m.id}, nil)
}

// leaveHow says who hears of a departure.
type leaveHow int

const (
	leaveNotice   leaveHow = iota // the others get "leaving"
	leaveSilently                 // nobody (the room is gone)
)

// broadcast sends an event to every member but except (nil: all): to this node's, and through
// the room's topic to the other nodes' when this node mixes a room that spans nodes.
func (r *room) broadcast(data any, except *member) {
	r.mu.Lock()
	targets := make([]*session, 0, len(r.members))
	for _, m := range r.members {
		if m != except && m.s != nil {
			targets = append(targets, m.s)
		}
	}
	r.mu.Unlock()
	for _, s := range targets {
		s.push("", data, nil)
	}
	if cr := r.cl.Load(); cr != nil {
		var ex uint64
		if except != nil {
			ex = except.id
		}
		cr.emit(data, ex)
	}
}

// participantsLocked describes the members but except, in join order; r.mu is held.
func (r *room) participantsLocked(except *member) []ParticipantInfo {
	ms := make([]*member, 0, len(r.members))
	for _, m := range r.members {
		if m != except {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].order < ms[j].order })
	out := make([]ParticipantInfo, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.info(r.opts.SpatialAudio))
	}
	return out
}

// changed tells the others a member's state changed (mute, display, setup), as Janus 1.1 does;
// withSelf tells the member too (a moderator's mute or unmute). Unlike joined and
// listparticipants, the event carries no "talking".
func (r *room) changed(m *member, withSelf bool) {
	r.mu.Lock()
	if r.members[m.id] != m {
		r.mu.Unlock()
		return
	}
	info := m.info(r.opts.SpatialAudio)
	info.Talking = nil
	ev := Participants{Audiobridge: "event", Room: r.id, Participants: []ParticipantInfo{info}}
	r.mu.Unlock()
	except := m
	if withSelf {
		except = nil
	}
	r.broadcast(ev, except)
}

// setupChanged records that m's media is up (or down) and tells the others.
func (r *room) setupChanged(m *member, up bool) {
	if m.setup.Swap(up) == up {
		return
	}
	if st := m.seatOf(); st != nil {
		go func() {
			if _, err := st.cr.ask(st.cr.c.ctx, ownerRequest{Op: opSetup, Room: r.id, ID: m.id, Setup: up}); err != nil {
				st.cr.c.log.Debug("audiobridge setup not told to the owner", "room", r.id, "id", m.id, "err", err)
			}
		}()
		return
	}
	r.changed(m, false)
}

// talkChanged is the talk detector's decision for m: talking events go to everyone (the speaker
// included) in rooms with audiolevel_event.
func (r *room) talkChanged(m *member, talking bool) {
	r.mu.Lock()
	notify := r.opts.AudioLevelEvent && r.members[m.id] == m
	r.mu.Unlock()
	if !notify {
		return
	}
	name := "stopped-talking"
	if talking {
		name = "talking"
	}
	r.broadcast(IDEvent{Audiobridge: name, Room: r.id, ID: m.id}, nil)
}

// groupIndex is a group's number (1-based) in the room's groups, 0 for none or unknown.
func (r *room) groupIndex(name *string) int32 {
	if name == nil {
		return 0
	}
	return int32(slices.Index(r.opts.Groups, *name) + 1)
}

// mutedFor says whether a member is muted in the mix: by itself or a moderator, or by mute_room
// unless it joined with the room's secret.
func (r *room) mutedFor(m *member) bool {
	return m.muted.Load() || (r.mutedAll.Load() && !m.admin)
}

// destroy removes the room's members (they get "destroyed") and stops its media.
func (r *room) destroy() {
	r.mu.Lock()
	r.destroyed = true
	members := make([]*member, 0, len(r.members))
	for _, m := range r.members {
		members = append(members, m)
	}
	seats := make([]*member, 0, len(r.seats))
	for _, m := range r.seats {
		seats = append(seats, m)
	}
	r.mu.Unlock()
	ev := RoomReply{Audiobridge: "destroyed", Room: r.id}
	for _, m := range seats { // the room's owner destroyed it
		m.s.push("", ev, nil)
		m.s.forgetMember(m)
		if st := m.seatOf(); st != nil {
			r.leaveSeat(m, st, false)
		}
	}
	for _, m := range members {
		if m.s != nil {
			m.s.push("", ev, nil)
			m.s.forgetMember(m)
		}
		r.leave(m, leaveSilently)
	}
	r.shutdown()
}

// shutdown stops the mixer and everything it feeds.
func (r *room) shutdown() {
	r.mu.Lock()
	r.destroyed = true
	for id, f := range r.forwarders {
		f.close()
		delete(r.forwarders, id)
	}
	for id, f := range r.files {
		f.close()
		delete(r.files, id)
	}
	rec := r.recording
	r.recording = nil
	r.changedLocked()
	mixer := r.mixer
	r.mixer = nil
	r.mu.Unlock()
	if mixer != nil {
		mixer.stop()
	}
	if rec != nil {
		rec.close()
	}
}
