package textroom

import (
	"crypto/rand"
	"strconv"

	"github.com/strata-rtc/strata/internal/plugin"
)

// Room ids are positive integers or, with string_ids, strings (Janus's string_ids). Inside, a room
// is known by its key, the id as a string (Janus's room_id_str); what clients see is its JSON
// value, a number or a string by the mode.

// roomParam is the room element in the mode: Janus's room_parameters or roomstr_parameters, or
// their optional forms (create).
func (p *Plugin) roomParam(required bool) plugin.Param {
	kind := plugin.Positive
	if p.cfg.StringIDs {
		kind = plugin.String
	}
	return plugin.Param{Name: "room", Kind: kind, Required: required}
}

// roomKey is the key of a request's validated room element ("" when absent).
func (p *Plugin) roomKey(b plugin.Body) string {
	if !b.Has("room") {
		return ""
	}
	if p.cfg.StringIDs {
		return b.Str("room")
	}
	return strconv.FormatUint(b.Uint("room"), 10)
}

// idValue is a key as clients see it; keys in integer mode always parse (they come from
// roomKey, a validated configuration or newKey).
func (p *Plugin) idValue(key string) any {
	if p.cfg.StringIDs {
		return key
	}
	n, _ := strconv.ParseUint(key, 10, 64)
	return n
}

// newKey picks an unused random id for create without one: a JavaScript-safe integer, or a random
// string as Janus's UUID (the caller holds the plugin's mutex).
func (p *Plugin) newKey() string {
	for {
		key := strconv.FormatUint(plugin.RandomID(), 10)
		if p.cfg.StringIDs {
			key = rand.Text()
		}
		if p.rooms[key] == nil {
			return key
		}
	}
}
