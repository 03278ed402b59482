package audiobridge

import (
	"context"
	"slices"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/plugin"
)

// process runs one asynchronous request (join, configure, changeroom, leave, hangup) and pushes
// its result or error as an event to the requester.
func (s *session) process(msg plugin.Message) {
	name, b, err := Decode(msg.Body)
	if err == nil && name == "join" && s.current() != nil {
		// Janus refuses a second join before looking at anything else.
		err = errorf(ErrAlreadyJoined, "Already in a room (use changeroom to join another one)")
	}
	var req Request
	if err == nil {
		req, err = ParseBody(name, b)
	}
	if err != nil {
		s.push(msg.Transaction, err.Data(Short), nil)
		return
	}
	var (
		reply any
		jsep  *plugin.JSEP
	)
	switch r := req.(type) {
	case *Join:
		reply, jsep, err = s.join(r, msg.JSEP)
	case *ChangeRoom:
		reply, err = s.changeRoom(r)
	case *Configure:
		reply, jsep, err = s.configure(r, msg.JSEP)
	case *Leave:
		reply, err = s.leave()
	case *Hangup:
		reply = Tag{Audiobridge: "hangingup"}
		defer s.h.ClosePeer("audiobridge hangup")
	}
	if err != nil {
		s.push(msg.Transaction, err.Data(Short), nil)
		return
	}
	s.push(msg.Transaction, reply, jsep)
}

// admit checks a join (or changeroom) against room r in Janus's order: plain RTP allowed, pin,
// token, secret, group; then the values. It returns the resolved settings.
func admit(j *Join, r *room, hasJSEP bool, newParticipant func(*RoomOptions) (Participant, *Error)) (Participant, bool, *Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := &r.opts
	if j.RTP != nil && !hasJSEP && !o.AllowRTPParticipants {
		return Participant{}, false, errorf(ErrUnauthorized, "Plain RTP participants not allowed in this room")
	}
	if err := CheckSecret("pin", j.PIN, o.PIN); err != nil {
		return Participant{}, false, err
	}
	if o.CheckTokens {
		if j.Token == nil || !slices.Contains(o.Allowed, *j.Token) {
			return Participant{}, false, errorf(ErrUnauthorized, "Unauthorized (not in the allowed list)")
		}
	}
	admin := false
	if j.Secret != nil {
		if err := CheckSecret("secret", j.Secret, o.Secret); err != nil {
			return Participant{}, false, err
		}
		admin = true
	}
	if len(o.Groups) > 0 {
		if j.Group == nil {
			return Participant{}, false, errorf(ErrMissing, "Missing mandatory element (group)")
		}
		if !slices.Contains(o.Groups, *j.Group) {
			return Participant{}, false, errorf(ErrNoSuchGroup, "No such group (%s)", *j.Group)
		}
	}
	set, err := newParticipant(o)
	return set, admin, err
}

// enter makes a new member of r for session s with settings set, and tells everyone. In a
// cluster, s is nil for a guest: a participant of node guestOf, mixed here.
func (r *room) enter(s *session, guestOf string, j *Join, set Participant, admin bool, event string) (*member, any, *Error) {
	r.mu.Lock()
	if r.destroyed {
		r.mu.Unlock()
		return nil, nil, errorf(ErrNoSuchRoom, "No such room (%d)", r.id)
	}
	id := j.ID
	if id == 0 {
		for id = plugin.RandomID(); r.members[id] != nil; id = plugin.RandomID() {
		}
	} else if r.members[id] != nil {
		r.mu.Unlock()
		return nil, nil, errorf(ErrIDExists, "User ID %d already exists", id)
	}
	if len(r.members) >= r.p.cfg.Limits.ParticipantsPerRoom {
		r.mu.Unlock()
		return nil, nil, errorf(ErrUnknown, "Too many participants in room %d", r.id)
	}
	m, err := newMember(s, r, id, set, j.Display)
	if err != nil {
		r.mu.Unlock()
		return nil, nil, err
	}
	m.admin = admin
	if guestOf != "" {
		m.guest = &guest{node: guestOf}
	}
	m.group.Store(r.groupIndex(j.Group))
	m.record = j.Record
	if j.Filename != nil {
		m.filename = *j.Filename
	}
	others := r.participantsLocked(nil)
	r.addLocked(m)
	spatial := r.opts.SpatialAudio
	r.mu.Unlock()

	r.broadcast(Participants{Audiobridge: "joined", Room: r.id, Participants: []ParticipantInfo{m.info(spatial)}}, m)
	return m, Joined{Audiobridge: event, Room: r.id, ID: id, Participants: others}, nil
}

func (s *session) join(j *Join, offer *plugin.JSEP) (any, *plugin.JSEP, *Error) {
	r, err := s.p.room(j.Room)
	if err != nil {
		return nil, nil, err
	}
	cr, elsewhere, err := s.p.mixedElsewhere(r)
	if err != nil {
		return nil, nil, err
	}
	var (
		m     *member
		reply any
	)
	if elsewhere {
		m, reply, err = cr.joinSeat(s, j, false)
	} else {
		var (
			set   Participant
			admin bool
		)
		set, admin, err = admit(j, r, offer != nil, j.NewParticipant)
		if err != nil {
			return nil, nil, err
		}
		if j.RTP != nil && offer == nil {
			return s.joinRTP(j, r, set, admin)
		}
		m, reply, err = r.enter(s, "", j, set, admin, "joined")
	}
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.member = m
	md := s.media
	s.mu.Unlock()
	if md != nil { // a participant who left and joins again on the same PeerConnection
		if md.codec != m.codec {
			s.leaveRoom(m)
			return nil, nil, errorf(ErrInvalid, "Invalid element (codec must stay %s on this PeerConnection)", md.codec)
		}
		if err := m.attach(md); err != nil {
			return nil, nil, errorf(ErrUnknown, "%v", err)
		}
	}
	if offer == nil && j.GenerateOffer {
		jsep, err := s.offer(m)
		if err != nil {
			s.leaveRoom(m)
			return nil, nil, err
		}
		return reply, jsep, nil
	}
	if offer == nil {
		return reply, nil, nil
	}
	if offer.Type == "answer" {
		return reply, nil, s.takeAnswer(m, offer)
	}
	answer, err := s.answer(m, offer)
	if err != nil {
		return nil, nil, err
	}
	return reply, answer, nil
}

// answer negotiates the participant's offer.
func (s *session) answer(m *member, offer *plugin.JSEP) (*plugin.JSEP, *Error) {
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	return s.negotiate(ctx, m, offer)
}

func (s *session) configure(c *Configure, jsep *plugin.JSEP) (any, *plugin.JSEP, *Error) {
	m := s.current()
	if m == nil {
		if jsep != nil {
			return nil, nil, errorf(ErrNotJoined, "Can't handle SDP (not in a room)")
		}
		return nil, nil, errorf(ErrNotJoined, "Can't configure (not in a room)")
	}
	st := m.seatOf()
	if st != nil { // the room is mixed on another node: it decides first
		if _, err := st.cr.askFor(s.q.Context(), ownerRequest{Op: opConfigure, Room: m.room.id, ID: m.id, Configure: c}); err != nil {
			return nil, nil, err
		}
	}
	if c.Group != nil {
		if err := m.room.checkGroup(c.Group, false); err != nil {
			return nil, nil, err
		}
		m.room.mu.Lock()
		m.group.Store(m.room.groupIndex(c.Group))
		m.room.mu.Unlock()
	}
	notify, err := m.configure(c)
	if err != nil {
		return nil, nil, err
	}
	if c.Record != nil {
		m.syncRecording()
	}
	if notify && st == nil {
		m.room.changed(m, false)
	}
	reply := Result{Audiobridge: "event", Result: "ok"}
	switch {
	case jsep != nil && jsep.Type == "answer":
		return reply, nil, s.takeAnswer(m, jsep)
	case jsep == nil && c.GenerateOffer:
		offer, err := s.offer(m)
		return reply, offer, err
	case jsep == nil:
		return reply, nil, nil
	}
	answer, err := s.answer(m, jsep)
	if err != nil {
		return nil, nil, err
	}
	return reply, answer, nil
}

func (s *session) changeRoom(c *ChangeRoom) (any, *Error) {
	old := s.current()
	if old == nil {
		return nil, errorf(ErrNotJoined, "Can't change room (not in a room in the first place)")
	}
	if old.room.id == c.Room {
		return nil, errorf(ErrAlreadyJoined, "Already in this room")
	}
	r, err := s.p.room(c.Room)
	if err != nil {
		return nil, err
	}
	cr, elsewhere, err := s.p.mixedElsewhere(r)
	if err != nil {
		return nil, err
	}
	if elsewhere {
		return s.changeToSeat(c, old, cr)
	}
	set, admin, err := admit(&c.Join, r, true, c.NewParticipant)
	if err != nil {
		return nil, err
	}
	if md := s.mediaOf(); md != nil && media.CodecByName(set.Codec) != md.codec {
		set.Codec = md.codec.String() // the PeerConnection's codec cannot change
	}
	s.leaveRoom(old)
	m, reply, err := r.enter(s, "", &c.Join, set, admin, "roomchanged")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.member = m
	md := s.media
	s.mu.Unlock()
	if md != nil {
		if err := m.attach(md); err != nil {
			return nil, errorf(ErrUnknown, "%v", err)
		}
		m.setup.Store(true)
	}
	return reply, nil
}

// changeToSeat is changeroom to a room mixed on another node: its owner admits the participant
// (in the PeerConnection's codec), then it leaves its old room and its media goes to the new one.
func (s *session) changeToSeat(c *ChangeRoom, old *member, cr *clusterRoom) (any, *Error) {
	j := c.Join
	md := s.mediaOf()
	if md != nil {
		codec := md.codec.String()
		j.Codec = &codec
	}
	m, reply, err := cr.joinSeat(s, &j, true)
	if err != nil {
		return nil, err
	}
	s.leaveRoom(old)
	s.mu.Lock()
	s.member = m
	s.mu.Unlock()
	if md != nil {
		if err := m.attach(md); err != nil {
			return nil, errorf(ErrUnknown, "%v", err)
		}
		m.room.setupChanged(m, true)
	}
	return reply, nil
}

func (s *session) leave() (any, *Error) {
	m := s.current()
	if m == nil {
		return nil, errorf(ErrNotJoined, "Can't leave (not in a room)")
	}
	s.leaveRoom(m)
	return IDEvent{Audiobridge: "left", Room: m.room.id, ID: m.id}, nil
}

// leaveRoom takes the session out of m's room (the others get "leaving").
func (s *session) leaveRoom(m *member) {
	s.forgetMember(m)
	m.room.leave(m, leaveNotice)
}

// forgetMember clears the session's membership if it is still m.
func (s *session) forgetMember(m *member) {
	s.mu.Lock()
	if s.member == m {
		s.member = nil
	}
	s.mu.Unlock()
}
