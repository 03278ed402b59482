// Package videocall is janus.plugin.videocall: users register a name, call each other by name, and
// the call's media is relayed through strata on the media core. Unlike Janus, which hands each
// side's SDP to the other and relays packets untouched, strata terminates both PeerConnections:
// each user's incoming tracks are sfu.Receivers and the other user gets sfu.DownTracks of them,
// with an sfu.Allocator over that user's own bandwidth estimate, so each direction of a call adapts
// to its receiver's downlink. The request API and events are Janus 1.1.2's (list, register, call,
// accept, set, hangup; registered, calling, incomingcall, accepted, update, hangup, simulcast).
package videocall

import (
	"log/slog"
	"sort"
	"sync"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.videocall"

const short = "videocall"

// Plugin is the videocall plugin. Create it with New.
type Plugin struct {
	cfg   config.VideoCall
	alloc sfu.AllocatorConfig
	rec   record.SessionOptions // playable recordings beside the .mjr files, or not
	log   *slog.Logger

	// mu guards the registry and every session's call state (username, peer, call): a call
	// changes two sessions at once, and one lock keeps them consistent without lock ordering.
	mu    sync.Mutex
	users map[string]*session

	sessions plugin.SessionSet[*session]
}

// New creates the plugin; each direction of a call is allocated layers with alloc (the
// videoroom's allocation section), and rec says what recordings write beside the .mjr files.
func New(cfg config.VideoCall, alloc config.LayerAllocation, rec record.SessionOptions, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, alloc: alloc.AllocatorConfig, rec: rec, log: log, users: map[string]*session{}}
}

// Package returns "janus.plugin.videocall".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata VideoCall plugin",
		Author:        "strata",
		Description:   "Peer-to-peer video calls between registered users, relayed through strata.",
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

// Destroy detaches every session (server shutdown).
func (p *Plugin) Destroy() {
	for _, s := range p.sessions.All() {
		s.Detach()
	}
}

// list is the registered usernames, sorted.
func (p *Plugin) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.users))
	for name := range p.users {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// register maps a name to s.
func (p *Plugin) register(s *session, name string) *plugin.RequestError {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.username != "" {
		return plugin.Errorf(ErrAlreadyRegistered, "Already registered (%s)", s.username)
	}
	if _, taken := p.users[name]; taken {
		return plugin.Errorf(ErrUsernameTaken, "Username '%s' already taken", name)
	}
	s.username = name
	p.users[name] = s
	return nil
}

// forget drops a detached session and its name.
func (p *Plugin) forget(s *session) {
	p.mu.Lock()
	if s.username != "" && p.users[s.username] == s {
		delete(p.users, s.username)
	}
	p.mu.Unlock()
	p.sessions.Remove(s)
}
