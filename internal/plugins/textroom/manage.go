package textroom

import (
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
)

// permanent refuses "permanent": true as Janus does without a configuration file: strata does not
// write its configuration.
func (r *request) permanent(what string) *plugin.RequestError {
	if p := r.b.OptBool("permanent"); p != nil && *p {
		return plugin.Errorf(ErrUnknown, "No configuration file, can't %s", what)
	}
	return nil
}

// named is Janus's reply to create, edit and destroy: "success" over the data channel, the event's
// name over the plugin API.
func (r *request) named(event string, rm any) map[string]any {
	name := "success"
	if r.api {
		name = event
	}
	return map[string]any{"textroom": name, "room": rm, "permanent": false}
}

// validPost refuses a backend that is not an http(s) URL (Janus takes any string and fails on
// each message).
func (r *request) validPost(key string) *plugin.RequestError {
	if err := config.ValidPostURL(r.b.Str(key)); err != nil {
		return plugin.Errorf(ErrInvalidElement, "Invalid element (%s: %v)", key, err)
	}
	return nil
}

func (r *request) list() (map[string]any, *plugin.RequestError) {
	locked := true
	if key := r.p.cfg.AdminKey; key != "" && r.b.Has("admin_key") {
		if err := r.b.Validate(plugin.Param{Name: "admin_key", Kind: plugin.NonEmptyString}); err == nil {
			if err := codes.CheckSecret("admin_key", r.b.OptStr("admin_key"), key); err != nil {
				return nil, err
			}
			locked = false
		}
	}
	list := []any{}
	for _, rm := range r.p.rooms {
		if rm.isPrivate && locked {
			continue
		}
		list = append(list, map[string]any{
			"room": rm.id, "description": rm.description, "pin_required": rm.pin != "",
			"num_participants": len(rm.participants), "history": rm.historySize,
		})
	}
	return success("list", list), nil
}

func (r *request) exists() (map[string]any, *plugin.RequestError) {
	if err := r.b.Validate(r.p.roomParam(true)); err != nil {
		return nil, err
	}
	key := r.p.roomKey(r.b)
	return success("room", r.p.idValue(key), "exists", r.p.rooms[key] != nil), nil
}

func (r *request) create() (map[string]any, *plugin.RequestError) {
	err := r.b.Validate(plugin.Param{Name: "description", Kind: plugin.String},
		plugin.Param{Name: "secret", Kind: plugin.String}, plugin.Param{Name: "pin", Kind: plugin.String},
		plugin.Param{Name: "post", Kind: plugin.String}, plugin.Param{Name: "is_private", Kind: plugin.Bool},
		plugin.Param{Name: "history", Kind: plugin.Positive}, plugin.Param{Name: "allowed", Kind: plugin.Array},
		plugin.Param{Name: "permanent", Kind: plugin.Bool}, r.p.roomParam(false))
	if err != nil {
		return nil, err
	}
	if key := r.p.cfg.AdminKey; key != "" {
		if err := r.b.Validate(plugin.Param{Name: "admin_key", Kind: plugin.String, Required: true}); err != nil {
			return nil, err
		}
		if err := codes.CheckSecret("admin_key", r.b.OptStr("admin_key"), key); err != nil {
			return nil, err
		}
	}
	tokens, err := r.b.Strings("allowed", "Invalid element in the allowed array (not a string)")
	if err != nil {
		return nil, err
	}
	if err := r.permanent("create permanent room"); err != nil {
		return nil, err
	}
	if err := r.validPost("post"); err != nil {
		return nil, err
	}
	key := r.p.roomKey(r.b)
	if key == "" || (!r.p.cfg.StringIDs && key == "0") {
		key = r.p.newKey() // Janus picks a random id when none (or 0) is asked for
	} else if r.p.rooms[key] != nil {
		return nil, plugin.Errorf(ErrRoomExists, "Room %s already exists", key)
	}
	rm := r.p.newRoom(config.TextRoomRoom{
		ID: key, Description: r.b.Str("description"), Secret: r.b.Str("secret"), PIN: r.b.Str("pin"),
		IsPrivate: r.b.Bool("is_private"), History: int(min(r.b.Int("history"), 1<<16)), Post: r.b.Str("post"),
	})
	if r.b.Has("allowed") {
		rm.checkTokens = true
		for _, t := range tokens {
			rm.allowed[t] = true
		}
	}
	r.p.rooms[key] = rm
	return r.named("created", rm.id), nil
}

func (r *request) edit() (map[string]any, *plugin.RequestError) {
	rm, err := r.secretRoom(plugin.Param{Name: "secret", Kind: plugin.String},
		plugin.Param{Name: "new_description", Kind: plugin.String}, plugin.Param{Name: "new_secret", Kind: plugin.String},
		plugin.Param{Name: "new_pin", Kind: plugin.String}, plugin.Param{Name: "new_post", Kind: plugin.String},
		plugin.Param{Name: "new_is_private", Kind: plugin.Bool}, plugin.Param{Name: "permanent", Kind: plugin.Bool})
	if err != nil {
		return nil, err
	}
	if err := r.permanent("edit room permanently"); err != nil {
		return nil, err
	}
	if err := r.validPost("new_post"); err != nil {
		return nil, err
	}
	if d := r.b.Str("new_description"); d != "" {
		rm.description = d
	}
	if r.b.Has("new_secret") {
		rm.secret = r.b.Str("new_secret")
	}
	if r.b.Has("new_pin") {
		rm.pin = r.b.Str("new_pin")
	}
	if r.b.Has("new_post") {
		rm.post = r.b.Str("new_post")
	}
	if v := r.b.OptBool("new_is_private"); v != nil {
		rm.isPrivate = *v
	}
	return r.named("edited", rm.id), nil
}

func (r *request) destroy() (map[string]any, *plugin.RequestError) {
	rm, err := r.secretRoom(plugin.Param{Name: "permanent", Kind: plugin.Bool}, plugin.Param{Name: "secret", Kind: plugin.String})
	if err != nil {
		return nil, err
	}
	if err := r.permanent("destroy room permanently"); err != nil {
		return nil, err
	}
	r.out.everyone(rm, encode(map[string]any{"textroom": "destroyed", "room": rm.id}), nil)
	for _, pt := range rm.participants {
		delete(pt.s.rooms, rm.key)
	}
	delete(r.p.rooms, rm.key)
	return r.named("destroyed", rm.id), nil
}
