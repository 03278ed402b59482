// Package textroom is janus.plugin.textroom: text rooms over data channels, as Janus 1.1 has them.
// A handle's `setup` gets strata's offer of a PeerConnection with only a data channel and the client
// answers with `ack`; from then on the client sends JSON requests ("textroom", "transaction") over the
// data channel: join, leave, message (to the room, to one user or to several), announcement and the
// room management requests, which the plugin API also answers synchronously ("request"). Replies and
// events (join, leave, message, announcement, kicked, destroyed) go back over the data channels.
//
// One mutex guards the rooms and their participants; what is to be sent is collected under it and
// sent after it is released, so a slow data channel never holds the rooms.
package textroom

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.textroom"

// Janus's error codes (janus_textroom.c).
const (
	ErrNoMessage      = 411
	ErrInvalidJSON    = 412
	ErrMissingElement = 413
	ErrInvalidElement = 414
	ErrInvalidRequest = 415
	ErrAlreadySetup   = 416
	ErrNoSuchRoom     = 417
	ErrRoomExists     = 418
	ErrUnauthorized   = 419
	ErrUsernameExists = 420
	ErrAlreadyInRoom  = 421
	ErrNotInRoom      = 422
	ErrNoSuchUser     = 423
	ErrUnknown        = 499
)

var codes = plugin.Codes{
	NoMessage: ErrNoMessage, InvalidJSON: ErrInvalidJSON, Missing: ErrMissingElement,
	Invalid: ErrInvalidElement, Unauthorized: ErrUnauthorized,
}

// Plugin is the textroom plugin. Create it with New.
type Plugin struct {
	cfg      config.TextRoom
	sessions plugin.SessionSet[*session]
	posts    *poster

	mu    sync.Mutex
	rooms map[string]*room
}

// New creates the plugin with the configuration's rooms (a validated configuration: its
// max_message_size positive, its room ids valid in its mode). log gets the backend POSTs'
// failures; each handle logs through its own logger.
func New(cfg config.TextRoom, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{cfg: cfg, rooms: map[string]*room{}, posts: newPoster(cfg.Post, log)}
	for _, r := range cfg.Rooms {
		p.rooms[r.ID] = p.newRoom(r)
	}
	return p
}

// Package returns "janus.plugin.textroom".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata TextRoom plugin",
		Author:        "strata",
		Description:   "A text room over data channels, with Janus's TextRoom API.",
		VersionString: "0.1.0",
		Version:       1,
	}
}

// AdminMessage answers the management requests, as Janus's textroom does through the admin API.
func (p *Plugin) AdminMessage(_ context.Context, request json.RawMessage) any {
	return p.apiRequest(nil, request, "")
}

// Attach creates the state of a newly attached handle.
func (p *Plugin) Attach(h plugin.Handle) (plugin.Session, error) {
	s := newSession(p, h)
	p.sessions.Add(s)
	return s, nil
}

// Destroy detaches every session and stops posting to the backends (server shutdown).
func (p *Plugin) Destroy() {
	for _, s := range p.sessions.All() {
		s.Detach()
	}
	p.posts.close()
}

// PostStats counts the POSTs to the rooms' backends.
func (p *Plugin) PostStats() PostStats { return p.posts.stats() }

// apiRequest answers a plugin API (or admin API) request: the management requests synchronously, by
// the same code as over the data channel. s is nil for the admin API.
func (p *Plugin) apiRequest(s *session, raw json.RawMessage, tx string) map[string]any {
	req, b, rerr := plugin.DecodeRequest(raw, &codes)
	if rerr != nil {
		return errorReply(rerr)
	}
	if !syncRequests[req] {
		return errorReply(plugin.Errorf(ErrInvalidRequest, "Unknown request '%s'", b.Str("request")))
	}
	reply, out := p.handle(s, req, b, true)
	out.send()
	return reply
}

// errorReply is Janus's error reply, over either API.
func errorReply(e *plugin.RequestError) map[string]any {
	return map[string]any{"textroom": "error", "error_code": e.Code, "error": e.Reason}
}
