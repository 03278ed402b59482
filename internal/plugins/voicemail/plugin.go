// Package voicemail is janus.plugin.voicemail (Janus 1.1's API, docs/VOICEMAIL.md): a client
// offers audio with a `record` request, strata records the Opus it sends for up to max_duration
// (Janus: 10 s), or until `stop`, and answers "done" with the URL of an Ogg/Opus file that strata's
// HTTP listener serves (Handler).
//
// The media path is the one every plugin uses: the offered audio feeds an sfu.Receiver, and the
// recording is a record.MJR sink on it, so the disk never slows the packets down (a slow or full
// disk loses recording data, counted). When the message ends the .mjr is converted to Ogg/Opus by
// internal/record/convert (packets reordered, gaps filled with silence, no transcoding) and removed.
package voicemail

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.voicemail"

const short = "voicemail"

// Janus's voicemail error codes (janus_voicemail.c).
const (
	ErrNoMessage        = 460
	ErrInvalidJSON      = 461
	ErrInvalidRequest   = 462
	ErrMissingElement   = 463
	ErrInvalidElement   = 464
	ErrAlreadyRecording = 465
	ErrIO               = 466
	ErrLibOgg           = 467
	ErrInvalidState     = 468
	ErrUnknown          = 499
)

var codes = plugin.Codes{NoMessage: ErrNoMessage, InvalidJSON: ErrInvalidJSON, Missing: ErrMissingElement, Invalid: ErrInvalidElement}

// Plugin is the voicemail plugin. Create it with New.
type Plugin struct {
	cfg      config.VoiceMail
	log      *slog.Logger
	sessions plugin.SessionSet[*session]
}

// New creates the plugin; messages go to cfg.Path, created when the first one is recorded.
func New(cfg config.VoiceMail, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, log: log}
}

// Package returns "janus.plugin.voicemail".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata VoiceMail plugin",
		Author:        "strata",
		Description:   "Records a short audio message (Opus) and returns the URL of a playable .opus file.",
		VersionString: "0.0.7",
		Version:       7,
	}
}

// AdminMessage: Janus's voicemail takes no admin requests.
func (p *Plugin) AdminMessage(_ context.Context, _ json.RawMessage) any {
	return plugin.Error(short, ErrInvalidRequest, "Admin requests are not supported by this plugin")
}

// Attach creates the state of a newly attached handle.
func (p *Plugin) Attach(h plugin.Handle) (plugin.Session, error) {
	s := newSession(p, h)
	p.sessions.Add(s)
	go s.work()
	return s, nil
}

// Destroy detaches every session (server shutdown).
func (p *Plugin) Destroy() {
	for _, s := range p.sessions.All() {
		s.Detach()
	}
}

func (p *Plugin) forget(s *session) { p.sessions.Remove(s) }
