// Package sip is janus.plugin.sip: a WebRTC <-> SIP gateway with Janus 1.1's API. Each handle is one
// SIP user agent (github.com/emiago/sipgo) with its own SIP port: it registers at a registrar (digest
// authentication with a password or its HA1, refreshed before expiry), calls SIP URIs and is called,
// and sends and receives in-dialog requests (re-INVITE for hold and updates, INFO, MESSAGE, REFER).
// The browser's media is bridged to the SIP side's plain RTP or SDES-SRTP by internal/rtpbridge; the
// plugin does signalling only. Requests are queued per handle (plugin.Queue) and answered as events,
// as Janus's are.
package sip

import (
	"log/slog"
	"sync"
	"time"

	"github.com/emiago/sipgo/sip"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.sip"

const (
	short     = "sip"
	queueSize = 32
	// defaultTTL is Janus's JANUS_DEFAULT_REGISTER_TTL, used when a request's register_ttl is not positive.
	defaultTTL = 3600
)

// Janus's error codes (janus_sip.c).
const (
	ErrUnknown           = 499
	ErrNoMessage         = 440
	ErrInvalidJSON       = 441
	ErrInvalidRequest    = 442
	ErrMissingElement    = 443
	ErrInvalidElement    = 444
	ErrAlreadyRegistered = 445
	ErrInvalidAddress    = 446
	ErrWrongState        = 447
	ErrMissingSDP        = 448
	ErrLibSofia          = 449 // a SIP stack error (Janus: libsofia)
	ErrIO                = 450
	ErrRecording         = 451
	ErrTooStrict         = 452
	ErrHelper            = 453
	ErrNoSuchCallID      = 454
)

var codes = plugin.Codes{
	NoMessage: ErrNoMessage, InvalidJSON: ErrInvalidJSON, Missing: ErrMissingElement,
	Invalid: ErrInvalidElement, Unauthorized: ErrWrongState,
}

// Plugin is the SIP plugin. Create it with New.
type Plugin struct {
	cfg      config.SIP
	log      *slog.Logger
	localIP  string
	sessions plugin.SessionSet[*session]

	mu      sync.Mutex
	masters map[uint64]*session // registered accounts helpers may attach to, by master_id
	nextID  uint64
}

var timersOnce sync.Once

// New creates the plugin. sip_timer_t1x64 sets the SIP stack's timers, which are the process's.
func New(cfg config.SIP, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.SIPTimerT1x64 >= 64 {
		timersOnce.Do(func() { sip.SetTimers(cfg.T1(), 4*time.Second, 5*time.Second) })
	}
	ip := cfg.LocalIP
	if ip == "" {
		ip = firstIPv4()
	}
	return &Plugin{cfg: cfg, log: log, localIP: ip, masters: map[uint64]*session{}}
}

// Package returns "janus.plugin.sip".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name: "strata SIP plugin", Author: "strata",
		Description:   "A WebRTC to SIP gateway: registers, calls and is called over SIP, media bridged to plain RTP or SDES-SRTP.",
		VersionString: "0.1.0", Version: 1,
	}
}

// PeerOptions gives every handle's PeerConnection the bridge's audio formats (G.722,
// telephone-event), whatever creates it first (plugin.PeerOptioner).
func (p *Plugin) PeerOptions() []peer.PeerOption { return []peer.PeerOption{peer.WithBridgeCodecs()} }

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

func (p *Plugin) forget(s *session) {
	p.sessions.Remove(s)
	p.mu.Lock()
	for id, m := range p.masters {
		if m == s {
			delete(p.masters, id)
		}
	}
	p.mu.Unlock()
}

// addMaster makes s a master helpers can name; it returns its master_id.
func (p *Plugin) addMaster(s *session) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	p.masters[p.nextID] = s
	return p.nextID
}

func (p *Plugin) master(id uint64) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.masters[id]
}
