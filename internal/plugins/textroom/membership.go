package textroom

import (
	"strings"

	"github.com/strata-rtc/strata/internal/plugin"
)

func (r *request) join() (map[string]any, *plugin.RequestError) {
	rm, err := r.room(plugin.Param{Name: "username", Kind: plugin.String, Required: true},
		plugin.Param{Name: "pin", Kind: plugin.String}, plugin.Param{Name: "token", Kind: plugin.String},
		plugin.Param{Name: "display", Kind: plugin.String}, plugin.Param{Name: "history", Kind: plugin.Bool})
	if err != nil {
		return nil, err
	}
	if err := codes.CheckSecret("pin", r.b.OptStr("pin"), rm.pin); err != nil {
		return nil, err
	}
	if r.s == nil {
		return nil, plugin.Errorf(ErrInvalidRequest, "Unsupported request join")
	}
	if r.me(rm) != nil {
		return nil, plugin.Errorf(ErrAlreadyInRoom, "Already in room %s", rm.key)
	}
	username := r.b.Str("username")
	if rm.participants[username] != nil {
		return nil, plugin.Errorf(ErrUsernameExists, "Username already taken")
	}
	if rm.checkTokens && (!r.b.Has("token") || !rm.allowed[r.b.Str("token")]) {
		return nil, plugin.Errorf(ErrUnauthorized, "Unauthorized (not in the allowed list)")
	}
	me := &participant{s: r.s, username: username, display: r.b.Str("display")}
	others := []any{}
	for _, pt := range rm.participants {
		others = append(others, describe(pt))
	}
	rm.participants[username] = me
	r.s.rooms[rm.key] = me
	if h := r.b.OptBool("history"); h == nil || *h {
		for _, msg := range rm.history {
			r.out.add(r.s, msg)
		}
	}
	ev := map[string]any{"textroom": "join", "room": rm.id, "username": username}
	if r.b.Has("display") {
		ev["display"] = me.display
	}
	r.out.everyone(rm, encode(ev), nil)
	return success("participants", others), nil
}

// describe is a participant as lists show it.
func describe(pt *participant) map[string]any {
	d := map[string]any{"username": pt.username}
	if pt.display != "" {
		d["display"] = pt.display
	}
	return d
}

func (r *request) leave() (map[string]any, *plugin.RequestError) {
	rm, err := r.room()
	if err != nil {
		return nil, err
	}
	me := r.me(rm)
	if me == nil {
		return nil, plugin.Errorf(ErrNotInRoom, "Not in room %s", rm.key)
	}
	r.out.leave(rm, me)
	return success(), nil
}

// leave takes pt out of rm and tells it and everyone left.
func (o *outbox) leave(rm *room, pt *participant) {
	ev := encode(map[string]any{"textroom": "leave", "room": rm.id, "username": pt.username})
	o.add(pt.s, ev)
	delete(rm.participants, pt.username)
	delete(pt.s.rooms, rm.key)
	o.everyone(rm, ev, nil)
}

func (r *request) kick() (map[string]any, *plugin.RequestError) {
	rm, err := r.secretRoom(plugin.Param{Name: "secret", Kind: plugin.String},
		plugin.Param{Name: "username", Kind: plugin.String, Required: true})
	if err != nil {
		return nil, err
	}
	username := r.b.Str("username")
	pt := rm.participants[username]
	if pt == nil {
		return nil, plugin.Errorf(ErrNoSuchUser, "No such user %s in room %s", username, rm.key)
	}
	r.out.everyone(rm, encode(map[string]any{"textroom": "kicked", "room": rm.id, "username": username}), nil)
	delete(rm.participants, username)
	delete(pt.s.rooms, rm.key)
	// Janus answers "textbridge" here; clients check for the absence of an error.
	return map[string]any{"textbridge": "success"}, nil
}

func (r *request) allowed() (map[string]any, *plugin.RequestError) {
	if err := r.b.Validate(plugin.Param{Name: "secret", Kind: plugin.String},
		plugin.Param{Name: "action", Kind: plugin.String, Required: true},
		plugin.Param{Name: "allowed", Kind: plugin.Array}, r.p.roomParam(true)); err != nil {
		return nil, err
	}
	action := strings.ToLower(r.b.Str("action"))
	if action != "enable" && action != "disable" && action != "add" && action != "remove" {
		return nil, plugin.Errorf(ErrInvalidElement, "Unsupported action '%s' (allowed)", r.b.Str("action"))
	}
	rm, err := r.room()
	if err != nil {
		return nil, err
	}
	if err := codes.CheckSecret("secret", r.b.OptStr("secret"), rm.secret); err != nil {
		return nil, err
	}
	tokens, err := r.b.Strings("allowed", "Invalid element in the allowed array (not a string)")
	if err != nil {
		return nil, err
	}
	switch action {
	case "enable", "disable":
		rm.checkTokens = action == "enable"
	default:
		for _, t := range tokens {
			if action == "add" {
				rm.allowed[t] = true
			} else {
				delete(rm.allowed, t)
			}
		}
	}
	reply := success("room", rm.id)
	if action != "disable" {
		list := []string{}
		for t := range rm.allowed {
			list = append(list, t)
		}
		reply["allowed"] = list
	}
	return reply, nil
}

func (r *request) announcement() (map[string]any, *plugin.RequestError) {
	rm, err := r.secretRoom(plugin.Param{Name: "secret", Kind: plugin.String},
		plugin.Param{Name: "text", Kind: plugin.String, Required: true})
	if err != nil {
		return nil, err
	}
	msg := map[string]any{"textroom": "announcement", "room": rm.id, "date": now(), "text": r.b.Str("text")}
	data := encode(msg)
	r.out.everyone(rm, data, nil)
	r.p.postTo(rm, data)
	rm.remember(data)
	return success(), nil
}

func (r *request) listParticipants() (map[string]any, *plugin.RequestError) {
	rm, err := r.room()
	if err != nil {
		return nil, err
	}
	list := []any{}
	for _, pt := range rm.participants {
		list = append(list, describe(pt))
	}
	// Janus's reply has no "textroom": "success" here.
	return map[string]any{"room": rm.id, "participants": list}, nil
}
