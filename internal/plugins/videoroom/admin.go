package videoroom

import (
	"slices"

	"github.com/strata-rtc/strata/internal/plugin"
)

// syncRequests are the requests answered at once (Janus: "success" with plugindata), also reachable
// through the admin API's message_plugin. Filled by init: a room's owner runs them for the other
// nodes (clusterowner.go), which the handlers reach again.
var syncRequests map[string]func(*Plugin, body) (map[string]any, *requestError)

func init() {
	syncRequests = map[string]func(*Plugin, body) (map[string]any, *requestError){
		"create":           (*Plugin).create,
		"edit":             (*Plugin).edit,
		"destroy":          (*Plugin).destroy,
		"exists":           (*Plugin).exists,
		"list":             (*Plugin).list,
		"allowed":          (*Plugin).allowed,
		"kick":             (*Plugin).kick,
		"moderate":         (*Plugin).moderate,
		"listparticipants": (*Plugin).listParticipants,
		"enable_recording": (*Plugin).enableRecording,
		"rtp_forward":      (*Plugin).rtpForward,
		"stop_rtp_forward": (*Plugin).stopRTPForward,
		"listforwarders":   (*Plugin).listForwarders,
	}
}

func (p *Plugin) create(b body) (map[string]any, *requestError) {
	if err := b.checkSecret("admin_key", p.cfg.AdminKey); err != nil {
		return nil, err
	}
	o := roomOptions{}
	var err *requestError
	strs := map[string]*string{"description": &o.description, "secret": &o.secret, "pin": &o.pin, "rec_dir": &o.recDir}
	for k, dst := range strs {
		if *dst, _, err = b.str(k, false); err != nil {
			return nil, err
		}
	}
	if err := p.checkRecDir(o.recDir); err != nil {
		return nil, err
	}
	bools := map[string]*bool{
		"is_private": &o.isPrivate, "bitrate_cap": &o.bitrateCap, "opus_fec": &o.opusFEC, "audiolevel_event": &o.audioLevelEvent,
		"notify_joining": &o.notifyJoining, "require_pvtid": &o.requirePvtID, "record": &o.record, "lock_record": &o.lockRecord,
	}
	for k, dst := range bools {
		if *dst, _, err = b.boolean(k); err != nil {
			return nil, err
		}
	}
	ints := map[string]*int{"publishers": &o.publishers, "fir_freq": &o.firFreq, "audio_active_packets": &o.audioActivePackets, "audio_level_average": &o.audioLevelAverage}
	for k, dst := range ints {
		v, _, err := b.uint(k, false)
		if err != nil {
			return nil, err
		}
		*dst = int(min(v, 1<<30))
	}
	bitrate, _, err := b.uint("bitrate", false)
	if err != nil {
		return nil, err
	}
	o.bitrate = int64(min(bitrate, 1<<40))
	for k, dst := range map[string]*[]string{"audiocodec": &o.audioCodecs, "videocodec": &o.videoCodecs} {
		s, _, err := b.str(k, false)
		if err != nil {
			return nil, err
		}
		*dst = codecList(s)
	}
	if o.allowed, o.checkAllowed, err = b.strings("allowed"); err != nil {
		return nil, err
	}
	if o.policy, _, err = layerPolicy(b); err != nil {
		return nil, err
	}
	o.normalize()
	id, given, err := b.uint("room", false)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !given {
		for id = plugin.RandomID(); p.rooms[id] != nil; id = plugin.RandomID() {
		}
	}
	if id == 0 {
		return nil, errorf(ErrInvalidElement, "Invalid element (room)")
	}
	if p.rooms[id] != nil {
		return nil, errorf(ErrRoomExists, "Room %d already exists", id)
	}
	if limit := p.cfg.Limits.Rooms; limit > 0 && len(p.rooms) >= limit {
		return nil, errorf(ErrUnknown, "Maximum number of rooms (%d) reached (plugins.videoroom.limits.rooms)", limit)
	}
	p.rooms[id] = newRoom(id, o)
	return map[string]any{short: "created", "room": id, "permanent": false}, nil
}

// adminRoom finds a room and checks its secret.
func (p *Plugin) adminRoom(b body) (*room, *requestError) {
	id, err := b.room()
	if err != nil {
		return nil, err
	}
	r, err := p.room(id)
	if err != nil {
		return nil, err
	}
	if err := b.checkSecret("secret", r.options().secret); err != nil {
		return nil, err
	}
	return r, nil
}

func (p *Plugin) edit(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	pol, hasPol, err := layerPolicy(b)
	if err != nil {
		return nil, err
	}
	if dir, ok, err := b.str("new_rec_dir", false); err != nil {
		return nil, err
	} else if ok {
		if err := p.checkRecDir(dir); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if hasPol {
		r.opts.policy = pol
	}
	for k, dst := range map[string]*string{"new_description": &r.opts.description, "new_secret": &r.opts.secret, "new_pin": &r.opts.pin, "new_rec_dir": &r.opts.recDir} {
		if v, ok, err := b.str(k, false); err != nil {
			return nil, err
		} else if ok {
			*dst = v
		}
	}
	for k, dst := range map[string]*bool{"new_is_private": &r.opts.isPrivate, "new_require_pvtid": &r.opts.requirePvtID, "new_lock_record": &r.opts.lockRecord} {
		if v, ok, err := b.boolean(k); err != nil {
			return nil, err
		} else if ok {
			*dst = v
		}
	}
	for k, dst := range map[string]*int{"new_fir_freq": &r.opts.firFreq, "new_publishers": &r.opts.publishers} {
		if v, ok, err := b.uint(k, false); err != nil {
			return nil, err
		} else if ok {
			*dst = int(min(v, 1<<30))
		}
	}
	if v, ok, err := b.uint("new_bitrate", false); err != nil {
		return nil, err
	} else if ok {
		r.opts.bitrate = int64(min(v, 1<<40))
	}
	return map[string]any{short: "edited", "room": r.id, "permanent": false}, nil
}

func (p *Plugin) destroy(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	if p.cl != nil {
		p.cl.notice(r, wireNotice{Action: noticeDestroy})
	} else {
		p.destroyHere(r)
	}
	return map[string]any{short: "destroyed", "room": r.id, "permanent": false}, nil
}

// destroyHere ends a destroyed room on this node.
func (p *Plugin) destroyHere(r *room) {
	p.mu.Lock()
	if p.rooms[r.id] == r {
		delete(p.rooms, r.id)
	}
	p.mu.Unlock()
	r.mu.Lock()
	r.destroyed = true
	r.mu.Unlock()
	for _, m := range r.members() {
		m.s.push("", map[string]any{short: "destroyed", "room": r.id}, nil)
		m.s.roomDestroyed()
	}
	for _, m := range r.everyone() {
		if m.node != "" {
			p.cl.feedEnded(m)
		}
	}
	p.dropSubscribersOf(r)
}

func (p *Plugin) exists(b body) (map[string]any, *requestError) {
	id, err := b.room()
	if err != nil {
		return nil, err
	}
	_, missing := p.room(id)
	return map[string]any{short: "success", "room": id, "exists": missing == nil}, nil
}

func (p *Plugin) list(b body) (map[string]any, *requestError) {
	key, _, err := b.str("admin_key", false)
	if err != nil {
		return nil, err
	}
	all := p.cfg.AdminKey != "" && key == p.cfg.AdminKey
	out := []map[string]any{}
	for _, r := range p.roomList() {
		if r.options().isPrivate && !all {
			continue
		}
		out = append(out, r.listEntry())
	}
	return map[string]any{short: "success", "list": out}, nil
}

func (p *Plugin) allowed(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	action, _, err := b.str("action", true)
	if err != nil {
		return nil, err
	}
	tokens, given, err := b.strings("allowed")
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch action {
	case "enable":
		r.opts.checkAllowed = true
	case "disable":
		r.opts.checkAllowed = false
	case "add", "remove":
		if !given {
			return nil, errorf(ErrMissingElement, "Missing element (allowed)")
		}
		for _, t := range tokens {
			i := slices.Index(r.opts.allowed, t)
			if action == "add" && i < 0 {
				r.opts.allowed = append(r.opts.allowed, t)
			} else if action == "remove" && i >= 0 {
				r.opts.allowed = slices.Delete(r.opts.allowed, i, i+1)
			}
		}
	default:
		return nil, errorf(ErrInvalidElement, "Unsupported action '%s' (allowed)", action)
	}
	out := map[string]any{short: "success", "room": r.id}
	if action != "disable" {
		out["allowed"] = append([]string{}, r.opts.allowed...)
	}
	return out, nil
}

// participantOf finds a room's participant named by "id".
func (p *Plugin) participantOf(b body, r *room) (*publisher, *requestError) {
	id, _, err := b.uint("id", true)
	if err != nil {
		return nil, err
	}
	m := r.participant(id)
	if m == nil {
		return nil, errorf(ErrNoSuchFeed, "No such user %d in room %d", id, r.id)
	}
	return m, nil
}

func (p *Plugin) kick(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	m, err := p.participantOf(b, r)
	if err != nil {
		return nil, err
	}
	if p.cl != nil {
		p.cl.notice(r, wireNotice{Action: noticeKick, ID: m.id})
	} else {
		p.kickHere(r, m)
	}
	return map[string]any{short: "success"}, nil
}

// kickHere removes a participant of this node that a moderator kicked.
func (p *Plugin) kickHere(r *room, m *publisher) {
	m.s.push("", map[string]any{short: "event", "room": r.id, "leaving": "ok", "reason": "kicked"}, nil)
	for _, o := range r.members() {
		if o != m {
			o.s.push("", map[string]any{short: "event", "room": r.id, "kicked": m.id}, nil)
		}
	}
	go m.s.kicked()
}

func (p *Plugin) moderate(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	m, err := p.participantOf(b, r)
	if err != nil {
		return nil, err
	}
	mid, _, err := b.str("mid", true)
	if err != nil {
		return nil, err
	}
	mute, ok, err := b.boolean("mute")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(ErrMissingElement, "Missing mandatory element (mute)")
	}
	if m.stream(mid) == nil {
		return nil, errorf(ErrNoSuchFeed, "No such stream %s for participant %d", mid, m.id)
	}
	if p.cl != nil {
		p.cl.notice(r, wireNotice{Action: noticeModerate, ID: m.id, Mid: mid, Mute: mute})
		return map[string]any{short: "success"}, nil
	}
	m.moderate(mid, mute)
	// As Janus: the room's participants, the moderated one included, hear of it.
	r.notify(moderationEvent(r, m.id, mid, mute), nil)
	return map[string]any{short: "success"}, nil
}

func (p *Plugin) listParticipants(b body) (map[string]any, *requestError) {
	id, err := b.room()
	if err != nil {
		return nil, err
	}
	r, err := p.room(id)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, m := range r.everyone() {
		e := m.identity()
		e["publisher"] = m.isActive()
		if r.options().audioLevelEvent {
			e["talking"] = m.isTalking()
		}
		out = append(out, e)
	}
	return map[string]any{short: "participants", "room": id, "participants": out}, nil
}

func (p *Plugin) enableRecording(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	rec, ok, err := b.boolean("record")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(ErrMissingElement, "Missing mandatory element (record)")
	}
	r.mu.Lock()
	changed := r.opts.record != rec
	r.opts.record = rec
	r.mu.Unlock()
	if changed { // as Janus: every participant follows the room's new state
		for _, pub := range r.members() {
			pub.setRecording(rec)
		}
	}
	return map[string]any{short: "success", "record": rec}, nil
}
