package audiobridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"sync"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// Plugin is janus.plugin.audiobridge: rooms whose participants' audio is mixed, each hearing
// everyone but itself. Create it with New.
type Plugin struct {
	cfg config.AudioBridge
	rec record.SessionOptions
	log *slog.Logger

	mu    sync.Mutex
	rooms map[uint64]*room

	sessions plugin.SessionSet[*session]

	mix mixTotals // every mixer's counters, for the metrics

	cl *clusterNode // rooms that span nodes (nil: one node)
}

// New creates the plugin with the rooms of the configuration; rec says whether participants'
// recordings also get a playable file beside their .mjr.
func New(cfg config.AudioBridge, rec record.SessionOptions, log *slog.Logger, opts ...Option) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{cfg: cfg, rec: rec, log: log, rooms: map[uint64]*room{}}
	for _, o := range opts {
		o(p)
	}
	for _, rc := range cfg.Rooms {
		r := newRoom(p, rc.ID, OptionsFromConfig(rc))
		p.rooms[rc.ID] = r
		if rc.Record {
			r.mu.Lock()
			if err := r.startRecordingLocked(nil, nil); err != nil {
				log.Error("audiobridge room recording", "room", rc.ID, "err", err)
			}
			r.mu.Unlock()
		}
	}
	if p.cl != nil { // once the configured rooms exist: the other nodes' requests may name them
		p.cl.start()
	}
	return p
}

// Package returns "janus.plugin.audiobridge".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata AudioBridge plugin",
		Author:        "strata",
		Description:   "An audio mixer (MCU) with Janus's AudioBridge API; the full mix is encoded once for every participant who is not talking.",
		VersionString: "0.1.0",
		Version:       1,
	}
}

// Attach creates the state of a newly attached handle.
func (p *Plugin) Attach(h plugin.Handle) (plugin.Session, error) {
	s := newSession(p, h)
	p.sessions.Add(s)
	return s, nil
}

// Destroy detaches every session and stops every room (server shutdown).
func (p *Plugin) Destroy() {
	for _, s := range p.sessions.All() {
		s.Detach()
	}
	p.mu.Lock()
	rooms := p.rooms
	p.rooms = map[uint64]*room{}
	p.mu.Unlock()
	for _, r := range rooms {
		r.shutdown()
	}
	if p.cl != nil {
		p.cl.close()
	}
}

// AdminMessage answers the admin API's message_plugin with the synchronous requests.
func (p *Plugin) AdminMessage(_ context.Context, request json.RawMessage) any {
	name, b, err := Decode(request)
	if err != nil {
		return err.Data(Short)
	}
	if Asynchronous(name) {
		return errorf(ErrInvalidReq, "Unknown request '%s'", b.Str("request")).Data(Short)
	}
	return p.handleSync(nil, name, b, request)
}

// handleSync answers a synchronous request; s is the requesting session (nil from the admin API).
// In a cluster, a request about a room mixed on another node goes to that node (raw as sent).
func (p *Plugin) handleSync(s *session, name string, b plugin.Body, raw json.RawMessage) any {
	if p.cl != nil && ownersRequest(name) {
		if r, err := p.room(b.Uint("room")); err == nil {
			cr, elsewhere, err := p.mixedElsewhere(r)
			if err != nil {
				return err.Data(Short)
			}
			if elsewhere {
				ans, err := cr.askFor(p.cl.ctx, ownerRequest{Op: opRequest, Room: r.id, Body: raw})
				if err != nil {
					return err.Data(Short)
				}
				return ans.Data
			}
		}
	}
	data := p.handleSyncHere(s, name, b)
	if p.cl != nil {
		p.cl.announce(name, data)
	}
	return data
}

// ownersRequest reports whether a synchronous request is decided by the node that mixes its
// room: what concerns the room's participants, its mix and its admission rules.
func ownersRequest(name string) bool {
	switch name {
	case "listparticipants", "kick", "mute", "unmute", "kick_all", "mute_room", "unmute_room", "allowed", "edit", "destroy",
		"rtp_forward", "stop_rtp_forward", "listforwarders", "play_file", "is_playing", "stop_file", "enable_recording":
		return true
	}
	return false
}

// handleSyncHere answers a synchronous request on this node.
func (p *Plugin) handleSyncHere(s *session, name string, b plugin.Body) any {
	req, err := ParseBody(name, b)
	if err != nil {
		return err.Data(Short)
	}
	data, err := p.sync(s, req)
	if err != nil {
		return err.Data(Short)
	}
	return data
}

func (p *Plugin) forget(s *session) { p.sessions.Remove(s) }

func (p *Plugin) room(id uint64) (*room, *Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.rooms[id]
	if !ok {
		return nil, errorf(ErrNoSuchRoom, "No such room (%d)", id)
	}
	return r, nil
}

func (p *Plugin) roomList() []*room {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*room, 0, len(p.rooms))
	for _, r := range p.rooms {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
