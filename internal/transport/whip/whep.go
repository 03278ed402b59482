package whip

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/gateway"
)

// target is what an endpoint path names: a videoroom (and for WHEP maybe one of its publishers),
// or for WHEP a streaming mountpoint.
type target struct {
	room       uint64
	feed       uint64 // WHEP: the publisher to watch; 0 for the room's first
	mountpoint uint64 // WHEP: the mountpoint to watch instead of a room
}

// parseTarget reads "<room>" (WHIP), "<room>[/<publisher id>]" or "mountpoint/<id>" (WHEP). Ids are
// numbers, as the videoroom's and the streaming plugin's are; anything else names nothing (404).
func parseTarget(kind, s string) (target, error) {
	var t target
	if id, ok := strings.CutPrefix(s, "mountpoint/"); ok && kind == WHEP {
		mp, err := strconv.ParseUint(id, 10, 64)
		if err != nil || mp == 0 {
			return t, errors.New("no such mountpoint: mountpoint ids are numbers")
		}
		t.mountpoint = mp
		return t, nil
	}
	roomStr, feedStr, hasFeed := strings.Cut(s, "/")
	room, err := strconv.ParseUint(roomStr, 10, 64)
	if err != nil || room == 0 {
		return t, errors.New("no such room: room ids are numbers")
	}
	t.room = room
	if !hasFeed {
		return t, nil
	}
	feed, err := strconv.ParseUint(feedStr, 10, 64)
	if kind != WHEP || err != nil || feed == 0 {
		return t, errors.New("no such endpoint")
	}
	t.feed = feed
	return t, nil
}

// watch subscribes to the publisher with the client's offer: the videoroom answers it (a
// subscription that starts from the client's offer), with the room's per-subscriber allocation and
// bandwidth estimation like any Janus-API subscriber.
func (h *Handler) watch(ctx context.Context, res *resource, t target, offer string) (string, error) {
	if t.mountpoint != 0 {
		return h.watchMountpoint(ctx, res, t.mountpoint, offer)
	}
	if err := h.attach(ctx, res, "janus.plugin.videoroom"); err != nil {
		return "", err
	}
	feed := t.feed
	if feed == 0 {
		var err error
		if feed, err = h.firstPublisher(ctx, res); err != nil {
			return "", err
		}
	}
	return h.message(ctx, res, map[string]any{"request": "join", "ptype": "subscriber", "room": res.room,
		"streams": []map[string]any{{"feed": feed}}}, offer)
}

// firstPublisher is the room's first participant that publishes (listparticipants order).
func (h *Handler) firstPublisher(ctx context.Context, res *resource) (uint64, error) {
	ev, err := h.janus.call(ctx, gateway.Origin{}, map[string]any{"janus": "message", "session_id": res.sid, "handle_id": res.hid,
		"body": map[string]any{"request": "listparticipants", "room": res.room}})
	if err != nil {
		return 0, err
	}
	if ev.PluginData != nil {
		list, _ := ev.PluginData.Data["participants"].([]any)
		for _, p := range list {
			m, _ := p.(map[string]any)
			if pub, _ := m["publisher"].(bool); pub {
				if id, ok := m["id"].(float64); ok {
					return uint64(id), nil
				}
			}
		}
	}
	return 0, &pluginError{Code: 428, Reason: "no one publishes in this room"}
}

// watchMountpoint watches a streaming mountpoint with the client's offer: the streaming plugin
// answers it, and the viewer gets its own allocator and estimate as any viewer. A later ICE restart
// is the same watch with a new offer.
func (h *Handler) watchMountpoint(ctx context.Context, res *resource, id uint64, offer string) (string, error) {
	if err := h.attach(ctx, res, "janus.plugin.streaming"); err != nil {
		return "", err
	}
	res.restart = map[string]any{"request": "watch", "id": id}
	return h.message(ctx, res, map[string]any{"request": "watch", "id": id}, offer)
}
