package textroom

import (
	"strings"

	"github.com/strata-rtc/strata/internal/plugin"
)

// syncRequests are the requests the plugin API answers synchronously (Janus's list).
var syncRequests = map[string]bool{
	"list": true, "listparticipants": true, "exists": true, "create": true, "edit": true,
	"announcement": true, "allowed": true, "kick": true, "destroy": true,
}

// request is one request being handled: over the data channel (s set, api false), the plugin API
// (api true) or the admin API (s nil).
type request struct {
	p   *Plugin
	s   *session
	b   plugin.Body
	api bool
	out outbox
}

type handler func(r *request) (map[string]any, *plugin.RequestError)

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"message": (*request).message, "join": (*request).join, "leave": (*request).leave,
		"list": (*request).list, "listparticipants": (*request).listParticipants,
		"allowed": (*request).allowed, "kick": (*request).kick, "announcement": (*request).announcement,
		"create": (*request).create, "exists": (*request).exists, "edit": (*request).edit,
		"destroy": (*request).destroy,
	}
}

// handle runs request name (matched case-insensitively, as Janus does) under the plugin's mutex and
// returns the reply (nil: none) and what is to be sent to the participants.
func (p *Plugin) handle(s *session, name string, b plugin.Body, api bool) (map[string]any, outbox) {
	f := handlers[strings.ToLower(name)]
	if f == nil {
		return errorReply(plugin.Errorf(ErrInvalidRequest, "Unsupported request %s", name)), nil
	}
	r := &request{p: p, s: s, b: b, api: api}
	p.mu.Lock()
	reply, err := f(r)
	p.mu.Unlock()
	if err != nil {
		return errorReply(err), r.out
	}
	return reply, r.out
}

// room validates params and the room element, and finds the room (417 "No such room (<id>)").
func (r *request) room(params ...plugin.Param) (*room, *plugin.RequestError) {
	if err := r.b.Validate(params...); err != nil {
		return nil, err
	}
	if err := r.b.Validate(r.p.roomParam(true)); err != nil {
		return nil, err
	}
	key := r.p.roomKey(r.b)
	rm := r.p.rooms[key]
	if rm == nil {
		return nil, plugin.Errorf(ErrNoSuchRoom, "No such room (%s)", key)
	}
	return rm, nil
}

// secretRoom is room for the requests that need the room's secret.
func (r *request) secretRoom(params ...plugin.Param) (*room, *plugin.RequestError) {
	rm, err := r.room(params...)
	if err != nil {
		return nil, err
	}
	return rm, codes.CheckSecret("secret", r.b.OptStr("secret"), rm.secret)
}

func success(kv ...any) map[string]any {
	m := map[string]any{"textroom": "success"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// me is the session's participant in rm (nil if not in it, or over an API).
func (r *request) me(rm *room) *participant {
	if r.s == nil {
		return nil
	}
	return r.s.rooms[rm.key]
}

func (r *request) message() (map[string]any, *plugin.RequestError) {
	rm, err := r.room(plugin.Param{Name: "text", Kind: plugin.String, Required: true},
		plugin.Param{Name: "to", Kind: plugin.String}, plugin.Param{Name: "tos", Kind: plugin.Array},
		plugin.Param{Name: "ack", Kind: plugin.Bool})
	if err != nil {
		return nil, err
	}
	me := r.me(rm)
	if me == nil {
		return nil, plugin.Errorf(ErrNotInRoom, "Not in room %s", rm.key)
	}
	if r.b.Has("to") && r.b.Has("tos") {
		return nil, plugin.Errorf(ErrInvalidElement, "Both to and tos array provided")
	}
	msg := map[string]any{"textroom": "message", "room": rm.id, "from": me.username, "date": now(), "text": r.b.Str("text")}
	tos := []string{r.b.Str("to")}
	if r.b.Has("tos") {
		// Janus reads past items that are not strings; strata refuses them.
		if tos, err = r.b.Strings("tos", "Invalid element in the tos array (not a string)"); err != nil {
			return nil, err
		}
	}
	reply := success()
	if r.b.Has("to") || r.b.Has("tos") {
		msg["whisper"] = true
		data := encode(msg)
		sent := map[string]any{}
		for _, to := range tos {
			pt := rm.participants[to]
			sent[to] = pt != nil
			if pt != nil {
				r.out.add(pt.s, data)
			}
		}
		reply["sent"] = sent
	} else {
		data := encode(msg)
		r.out.everyone(rm, data, nil)
		r.p.postTo(rm, data)
		if rm.historySize > 0 {
			msg["display"] = me.display
			rm.remember(encode(msg))
		}
	}
	if ack := r.b.OptBool("ack"); ack != nil && !*ack {
		return nil, nil
	}
	return reply, nil
}
