// Package nosip is janus.plugin.nosip (Janus 1.1.2's API): the media bridge between a browser's
// WebRTC PeerConnection and a plain RTP or SDES-SRTP peer whose signalling the application does
// itself. `generate` turns the browser's JSEP (offer or answer) into a plain SDP, `process` the
// plain peer's SDP into a JSEP for the browser; `hangup` ends the call and `recording` records
// either side. The media goes through internal/rtpbridge (the media core's Receivers, DownTracks
// and strata's own RTP ports); strata adds `keyframe`, as Janus's SIP plugin has it.
package nosip

import (
	"log/slog"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.nosip"

const (
	short     = "nosip"
	queueSize = 16
)

// Janus's NoSIP error codes.
const (
	ErrUnknown        = 499
	ErrNoMessage      = 440
	ErrInvalidJSON    = 441
	ErrInvalidRequest = 442
	ErrMissingElement = 443
	ErrInvalidElement = 444
	ErrWrongState     = 445
	ErrMissingSDP     = 446
	ErrInvalidSDP     = 447
	ErrIOError        = 448
	ErrRecording      = 449
	ErrTooStrict      = 450
)

var codes = &plugin.Codes{
	NoMessage: ErrNoMessage, InvalidJSON: ErrInvalidJSON, Missing: ErrMissingElement, Invalid: ErrInvalidElement,
	Unauthorized: ErrInvalidElement,
}

// Plugin is the NoSIP plugin. Create it with New.
type Plugin struct {
	cfg      config.NoSIP
	bridge   rtpbridge.Config
	rec      record.SessionOptions
	log      *slog.Logger
	sessions plugin.SessionSet[*session]
}

// New creates the plugin from its configuration (validated by internal/config); rec says what
// recordings write beside the .mjr files.
func New(cfg config.NoSIP, rec record.SessionOptions, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lo, hi, err := config.ParsePortRange(cfg.RTPPortRange)
	if err != nil {
		log.Warn("nosip rtp_port_range ignored", "err", err)
	}
	return &Plugin{
		cfg: cfg, rec: rec, log: log,
		bridge: rtpbridge.Config{LocalIP: cfg.LocalIP, SDPIP: cfg.SDPIP, PortMin: lo, PortMax: hi,
			DSCPAudio: cfg.DSCPAudioRTP, DSCPVideo: cfg.DSCPVideoRTP},
	}
}

// Package returns "janus.plugin.nosip".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata NoSIP plugin",
		Author:        "strata",
		Description:   "A plain RTP bridge that leaves signalling (e.g., SIP) to the application.",
		VersionString: "0.0.1",
		Version:       1,
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
