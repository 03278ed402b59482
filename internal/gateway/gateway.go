// Package gateway is the Janus API state machine: sessions, handles, the plugin registry, event
// routing to transports, authentication and session timeouts. Transports hand it raw requests
// (Submit, Handle, Admin) together with an Origin naming the Sink that owns the sessions they create;
// it answers with janus.Message envelopes and pushes events to each session's Sink. It does no I/O of
// its own, so tests drive it without any network.
package gateway

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/events"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// PeerFactory creates PeerConnections for handles; *peer.Factory implements it. A nil PeerFactory
// gives a gateway without media: Handle.Peer then fails, which is enough for signalling tests.
type PeerFactory interface {
	New(h peer.Hooks, opts ...peer.PeerOption) (*peer.Peer, error)
}

// Gateway is the Janus core. All methods are safe for concurrent use.
type Gateway struct {
	cfg     config.Config
	peers   PeerFactory
	plugins map[string]plugin.Plugin
	log     *slog.Logger
	level   *slog.LevelVar
	started time.Time

	// Runtime-adjustable settings (admin API).
	sessionTimeout atomic.Int64 // nanoseconds; 0 disables
	acceptNew      atomic.Bool
	// dropped counts events that found no way to their client.
	dropped atomic.Uint64
	// events receives the event handlers' events (nil: none).
	events *events.Bus
	// cluster serves the admin API's cluster verbs; nil on a server without a cluster.
	cluster ClusterAdmin

	mu         sync.RWMutex
	limits     limits // its per-address counts are guarded by mu
	sessions   map[uint64]*session
	handles    map[uint64]*handle
	transports map[string]plugin.Info
	tokens     *tokenStore // stored-token authentication (tokens.go)

	watchdogEvery time.Duration
	ctx           context.Context
	cancel        context.CancelFunc
	watchdogDone  chan struct{}
	closeOnce     sync.Once
}

// Option adjusts a Gateway at construction.
type Option func(*Gateway)

// WithWatchdogInterval sets how often session timeouts are checked (default 1 s).
func WithWatchdogInterval(d time.Duration) Option {
	return func(g *Gateway) {
		if d > 0 {
			g.watchdogEvery = d
		}
	}
}

// New builds a gateway over cfg (copied; later changes to *cfg are not seen), with the given plugins
// (two with the same package name: the later wins) and peer factory (nil for no media). level is the
// level the server's logger honours; set_log_level changes it. A nil log or level gets a default.
func New(cfg *config.Config, peers PeerFactory, plugins []plugin.Plugin, log *slog.Logger, level *slog.LevelVar, opts ...Option) *Gateway {
	if log == nil {
		log = slog.Default()
	}
	if level == nil {
		level = new(slog.LevelVar)
	}
	g := &Gateway{
		cfg:           *cfg,
		peers:         peers,
		plugins:       make(map[string]plugin.Plugin, len(plugins)),
		log:           log,
		level:         level,
		started:       time.Now(),
		sessions:      make(map[uint64]*session),
		handles:       make(map[uint64]*handle),
		transports:    make(map[string]plugin.Info),
		watchdogEvery: time.Second,
		watchdogDone:  make(chan struct{}),
		limits:        newLimits(cfg.General.Limits),
	}
	if n := cfg.General.Limits.PeerConnections; peers != nil && n > 0 {
		g.peers = &countedPeers{PeerFactory: peers, limit: int64(n)}
	}
	for _, p := range plugins {
		g.plugins[p.Package()] = p
	}
	g.tokens = newTokenStore(cfg.General.Tokens, g.pluginNames())
	g.sessionTimeout.Store(int64(cfg.General.SessionTimeout))
	g.acceptNew.Store(cfg.General.AcceptNewSessions)
	for _, o := range opts {
		o(g)
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	go g.watchdog()
	if g.events != nil {
		g.EmitCore(events.SubtypeCoreStartup, map[string]any{"status": "started", "info": g.ServerInfo("").Extra})
		if p := cfg.Events.StatsPeriod; p > 0 {
			go g.statsLoop(p)
		}
	}
	return g
}

// Close destroys every session (hanging up PeerConnections and detaching plugin sessions, without
// events), stops the watchdog and calls Destroy on every plugin. It is idempotent.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() {
		g.EmitCore(events.SubtypeCoreShutdown, map[string]any{"status": "shutdown"})
		g.cancel()
		<-g.watchdogDone
		for _, s := range g.allSessions() {
			g.destroySession(s, false)
		}
		for _, p := range g.plugins {
			p.Destroy()
		}
	})
}

// Logger is the gateway's logger, for transports to derive theirs from.
func (g *Gateway) Logger() *slog.Logger { return g.log }

// LogLevel is the level variable that set_log_level changes.
func (g *Gateway) LogLevel() *slog.LevelVar { return g.level }

// Config returns the configuration the gateway was built with.
func (g *Gateway) Config() config.Config { return g.cfg }

// SessionTimeout is the current session timeout (0: sessions never time out).
func (g *Gateway) SessionTimeout() time.Duration { return time.Duration(g.sessionTimeout.Load()) }

// AcceptingNewSessions reports whether `create` is accepted.
func (g *Gateway) AcceptingNewSessions() bool { return g.acceptNew.Load() }

// DroppedEvents counts events that could not be delivered (session with no sink, or a sink that
// dropped them itself is counted by the sink).
func (g *Gateway) DroppedEvents() uint64 { return g.dropped.Load() }

// RegisterTransport lists a transport in the `info` reply. Transports call it from their
// constructors.
func (g *Gateway) RegisterTransport(pkg string, info plugin.Info) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.transports[pkg] = info
}

// SessionCount is the number of live sessions.
func (g *Gateway) SessionCount() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.sessions)
}

// HandleCounts is the number of live handles per plugin package: every loaded plugin is listed,
// with 0 when it has none, so the metrics keep one series per plugin.
func (g *Gateway) HandleCounts() map[string]int {
	out := make(map[string]int, len(g.plugins))
	for name := range g.plugins {
		out[name] = 0
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, h := range g.handles {
		out[h.plug.Package()]++
	}
	return out
}

// HasSession reports whether a session exists.
func (g *Gateway) HasSession(id uint64) bool {
	return g.session(id) != nil
}

// Touch refreshes a session's last activity, as a long-poll does. It returns a 458 error for an
// unknown session.
func (g *Gateway) Touch(id uint64) error {
	s := g.session(id)
	if s == nil {
		return errNoSession(id)
	}
	s.touch()
	return nil
}

// Authorized reports whether a request carrying apisecret and token passes the configured
// api_secret/token authentication. With both configured, either one suffices (as in Janus).
func (g *Gateway) Authorized(apisecret, token string) bool {
	secret := g.cfg.General.APISecret
	tokens := g.cfg.General.TokenAuth
	if secret == "" && !tokens {
		return true
	}
	if secret != "" && apisecret == secret {
		return true
	}
	return tokens && token != "" && g.validToken(token)
}

func (g *Gateway) validToken(token string) bool {
	return g.tokens.valid(token)
}

func (g *Gateway) session(id uint64) *session {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.sessions[id]
}

func (g *Gateway) handle(id uint64) *handle {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.handles[id]
}

func (g *Gateway) allSessions() []*session {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		out = append(out, s)
	}
	return out
}

// maxID keeps ids exactly representable as JavaScript numbers, as Janus does.
const maxID = 1<<53 - 1

// newID draws a random id in [1, 2^53) that is not in use. Called with g.mu held.
func newID(inUse func(uint64) bool) uint64 {
	for {
		id := rand.Uint64N(maxID) + 1
		if !inUse(id) {
			return id
		}
	}
}
