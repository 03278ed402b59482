package textroom

import (
	"encoding/json"
	"time"

	"github.com/strata-rtc/strata/internal/config"
)

// room is one text room. Its fields are guarded by the plugin's mutex.
type room struct {
	key         string // the id as a string: the key of the maps and what errors quote
	id          any    // the id as clients see it: a number, or a string with string_ids
	description string
	secret, pin string
	isPrivate   bool
	post        string // the HTTP backend public messages and announcements are POSTed to
	historySize int
	history     [][]byte // the last historySize public messages, oldest first, with "display"

	checkTokens bool
	allowed     map[string]bool

	participants map[string]*participant
}

// participant is a session in a room under a username.
type participant struct {
	s        *session
	username string
	display  string
}

// newRoom makes the room c describes; c.ID is a valid key in p's mode.
func (p *Plugin) newRoom(c config.TextRoomRoom) *room {
	desc := c.Description
	if desc == "" {
		desc = "Room " + c.ID // Janus's description of a room created without one
	}
	return &room{
		key: c.ID, id: p.idValue(c.ID), description: desc, secret: c.Secret, pin: c.PIN, isPrivate: c.IsPrivate,
		post: c.Post, historySize: max(c.History, 0),
		allowed: map[string]bool{}, participants: map[string]*participant{},
	}
}

// remember keeps a public message in the room's history.
func (r *room) remember(msg []byte) {
	if r.historySize == 0 {
		return
	}
	r.history = append(r.history, msg)
	if over := len(r.history) - r.historySize; over > 0 {
		r.history = append(r.history[:0:0], r.history[over:]...)
	}
}

// delivery is one data channel message to send once the plugin's mutex is released.
type delivery struct {
	to  *session
	msg []byte
}

type outbox []delivery

func (o *outbox) add(to *session, msg []byte) {
	if to != nil {
		*o = append(*o, delivery{to, msg})
	}
}

// everyone queues msg to each participant of r, but skip.
func (o *outbox) everyone(r *room, msg []byte, skip *participant) {
	for _, pt := range r.participants {
		if pt != skip {
			o.add(pt.s, msg)
		}
	}
}

func (o outbox) send() {
	for _, d := range o {
		d.to.sendData(d.msg)
	}
}

// encode is json.Marshal for the plugin's own messages, which always encode.
func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// now is the date Janus stamps messages with (strftime's %FT%T%z, local time).
func now() string { return time.Now().Format("2006-01-02T15:04:05-0700") }
