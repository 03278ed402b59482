package audiobridge

import (
	"slices"

	"github.com/strata-rtc/strata/internal/plugin"
)

// sync answers a synchronous request; s is the requesting session (nil from the admin API).
func (p *Plugin) sync(s *session, req Request) (any, *Error) {
	switch r := req.(type) {
	case *Create:
		return p.create(r)
	case *Edit:
		return p.edit(r)
	case *Destroy:
		return p.destroy(r)
	case *Exists:
		_, err := p.room(r.Room)
		return ExistsReply{Audiobridge: "success", Room: r.Room, Exists: err == nil}, nil
	case *List:
		return p.list(r)
	case *ListParticipants:
		rm, err := p.room(r.Room)
		if err != nil {
			return nil, err
		}
		rm.mu.Lock()
		defer rm.mu.Unlock()
		return Participants{Audiobridge: "participants", Room: r.Room, Participants: rm.participantsLocked(nil)}, nil
	case *Allowed:
		return p.allowed(r)
	case *ParticipantAdmin:
		return p.participantAdmin(r)
	case *RoomAdmin:
		return p.roomAdmin(r)
	case *ResetDecoder:
		m := s.currentOrNil()
		if m == nil {
			return nil, errorf(ErrNotJoined, "Can't reset (not in a room)")
		}
		if st := m.seatOf(); st != nil { // its decoder is on the node that mixes the room
			if _, err := st.cr.askFor(st.cr.c.ctx, ownerRequest{Op: opReset, Room: m.room.id, ID: m.id}); err != nil {
				return nil, err
			}
			return Tag{Audiobridge: "success"}, nil
		}
		m.in.Resync()
		return Tag{Audiobridge: "success"}, nil
	case *RTPForward:
		return p.rtpForward(r)
	case *StopRTPForward:
		return p.stopRTPForward(r)
	case *PlayFile:
		return p.playFile(r)
	case *FileCheck:
		return p.fileCheck(r)
	case *EnableRecording:
		return p.enableRecording(r)
	case *EnableMJRs:
		return p.enableMJRs(r)
	}
	return nil, errorf(ErrInvalidReq, "Unknown request '%s'", req.Name())
}

// authorized finds a room and checks the secret a request carried.
func (p *Plugin) authorized(id uint64, secret *string) (*room, *Error) {
	r, err := p.room(id)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	want := r.opts.Secret
	r.mu.Unlock()
	if err := CheckSecret("secret", secret, want); err != nil {
		return nil, err
	}
	return r, nil
}

// checkAdminKey applies the plugin's admin_key when it is configured and lock says it applies.
func (p *Plugin) checkAdminKey(got *string, lock bool) *Error {
	if p.cfg.AdminKey == "" || !lock {
		return nil
	}
	return CheckSecret("admin_key", got, p.cfg.AdminKey)
}

func (p *Plugin) create(c *Create) (any, *Error) {
	if err := p.checkAdminKey(c.AdminKey, true); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id := c.Room
	if id == 0 {
		for id = plugin.RandomID(); p.rooms[id] != nil; id = plugin.RandomID() {
		}
	} else if p.rooms[id] != nil {
		return nil, errorf(ErrRoomExists, "Room %d already exists", id)
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	if len(p.rooms) >= p.cfg.Limits.Rooms {
		return nil, errorf(ErrUnknown, "Too many rooms (%d)", len(p.rooms))
	}
	if c.Permanent {
		return nil, errorf(ErrUnknown, "No configuration file, can't create permanent room")
	}
	o := c.Options
	if o.Description == "" {
		o.Description = defaultDescription(id)
	}
	r := newRoom(p, id, o)
	p.rooms[id] = r
	if o.Record {
		r.mu.Lock()
		err := r.startRecordingLocked(nil, nil)
		r.mu.Unlock()
		if err != nil {
			delete(p.rooms, id)
			r.shutdown()
			return nil, err
		}
	}
	return RoomReply{Audiobridge: "created", Room: id, Permanent: &c.Permanent}, nil
}

func (p *Plugin) edit(e *Edit) (any, *Error) {
	r, err := p.authorized(e.Room, e.Secret)
	if err != nil {
		return nil, err
	}
	if e.Permanent {
		return nil, errorf(ErrUnknown, "No configuration file, can't edit room permanently")
	}
	r.mu.Lock()
	o := &r.opts
	if e.NewDescription != nil && *e.NewDescription != "" {
		o.Description = *e.NewDescription
	}
	if e.NewSecret != nil {
		o.Secret = *e.NewSecret
	}
	if e.NewPIN != nil {
		o.PIN = *e.NewPIN
	}
	if e.NewIsPrivate != nil {
		o.IsPrivate = *e.NewIsPrivate
	}
	if e.NewRecordDir != nil {
		o.RecordDir = *e.NewRecordDir
	}
	if e.NewMJRsDir != nil {
		o.MJRsDir = *e.NewMJRsDir
	}
	r.mu.Unlock()
	return RoomReply{Audiobridge: "edited", Room: e.Room, Permanent: &e.Permanent}, nil
}

func (p *Plugin) destroy(d *Destroy) (any, *Error) {
	r, err := p.authorized(d.Room, d.Secret)
	if err != nil {
		return nil, err
	}
	if d.Permanent {
		return nil, errorf(ErrUnknown, "No configuration file, can't destroy room permanently")
	}
	p.mu.Lock()
	if p.rooms[d.Room] != r {
		p.mu.Unlock()
		return nil, errorf(ErrNoSuchRoom, "No such room (%d)", d.Room)
	}
	delete(p.rooms, d.Room)
	p.mu.Unlock()
	r.destroy()
	return RoomReply{Audiobridge: "destroyed", Room: d.Room, Permanent: &d.Permanent}, nil
}

func (p *Plugin) list(l *List) (any, *Error) {
	if l.AdminKey != nil && p.cfg.AdminKey != "" {
		if err := CheckSecret("admin_key", l.AdminKey, p.cfg.AdminKey); err != nil {
			return nil, err
		}
	}
	showPrivate := l.AdminKey != nil && p.cfg.AdminKey != ""
	out := []RoomInfo{}
	for _, r := range p.roomList() {
		r.mu.Lock()
		if !r.opts.IsPrivate || showPrivate {
			out = append(out, RoomInfo{
				Room: r.id, Description: r.opts.Description, SamplingRate: r.opts.SamplingRate,
				SpatialAudio: r.opts.SpatialAudio, PINRequired: r.opts.PIN != "", Record: r.recording != nil,
				Muted: r.mutedAll.Load(), NumParticipants: len(r.members),
			})
		}
		r.mu.Unlock()
	}
	return ListReply{Audiobridge: "success", List: out}, nil
}

func (p *Plugin) allowed(a *Allowed) (any, *Error) {
	r, err := p.authorized(a.Room, a.Secret)
	if err != nil {
		return nil, err
	}
	if err := a.Check(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	o := &r.opts
	switch a.Action {
	case "enable":
		o.CheckTokens = true
	case "disable":
		o.CheckTokens = false
		return RoomReply{Audiobridge: "success", Room: a.Room}, nil
	case "add":
		for _, t := range a.Tokens {
			if !slices.Contains(o.Allowed, t) {
				o.Allowed = append(o.Allowed, t)
			}
		}
	case "remove":
		o.Allowed = slices.DeleteFunc(o.Allowed, func(t string) bool { return slices.Contains(a.Tokens, t) })
	}
	return AllowedReply{Audiobridge: "success", Room: a.Room, Allowed: append([]string{}, o.Allowed...)}, nil
}

func (p *Plugin) participantAdmin(a *ParticipantAdmin) (any, *Error) {
	r, err := p.authorized(a.Room, a.Secret)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	m := r.members[a.ID]
	r.mu.Unlock()
	if m == nil {
		return nil, errorf(ErrNoSuchUser, "No such user %d in room %d", a.ID, a.Room)
	}
	switch a.Op {
	case "kick":
		kicked := m.id
		r.broadcast(RoomEvent{Audiobridge: "event", Room: r.id, Kicked: &kicked}, nil)
		if m.guest != nil {
			r.leave(m, leaveNotice)
			r.cl.Load().drop(m.guest.node, m.id, nil, true)
			return Tag{Audiobridge: "success"}, nil
		}
		m.s.leaveRoom(m)
		m.s.h.ClosePeer("kicked from the audiobridge")
		return Tag{Audiobridge: "success"}, nil
	default: // mute, unmute
		mute := a.Op == "mute"
		m.mu.Lock()
		changed := m.settings.Muted != mute
		m.settings.Muted = mute
		m.mu.Unlock()
		if !changed {
			return Tag{Audiobridge: "success"}, nil
		}
		m.muted.Store(mute)
		r.changed(m, true)
		return RoomReply{Audiobridge: "success", Room: r.id}, nil
	}
}

func (p *Plugin) roomAdmin(a *RoomAdmin) (any, *Error) {
	r, err := p.authorized(a.Room, a.Secret)
	if err != nil {
		return nil, err
	}
	switch a.Op {
	case "kick_all":
		r.mu.Lock()
		members := make([]*member, 0, len(r.members))
		for _, m := range r.members {
			members = append(members, m)
		}
		r.mu.Unlock()
		for _, m := range members {
			id := m.id
			if m.guest != nil {
				r.cl.Load().drop(m.guest.node, id, RoomEvent{Audiobridge: "event", Room: r.id, KickedAll: &id}, true)
				r.leave(m, leaveSilently)
				continue
			}
			m.s.push("", RoomEvent{Audiobridge: "event", Room: r.id, KickedAll: &id}, nil)
			m.s.forgetMember(m)
			r.leave(m, leaveSilently)
			m.s.h.ClosePeer("kicked from the audiobridge")
		}
		return Tag{Audiobridge: "success"}, nil
	case "listforwarders":
		return r.listForwarders(), nil
	default: // mute_room, unmute_room
		mute := a.Op == "mute_room"
		if r.mutedAll.Swap(mute) != mute {
			r.broadcast(RoomEvent{Audiobridge: "event", Room: r.id, Muted: &mute}, nil)
		}
		return RoomReply{Audiobridge: "success", Room: r.id}, nil
	}
}
