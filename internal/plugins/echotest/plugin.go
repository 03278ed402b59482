// Package echotest is janus.plugin.echotest: everything a peer sends comes back to it. Each audio or
// video m-line is one sfu.Receiver, fed by the browser's tracks, and one sfu.DownTrack on the same
// PeerConnection that sends it back: the media core selects layers, rewrites the stream into one
// continuous one, asks for keyframes and answers NACKs. Data channel messages are answered. The
// request API is Janus's: audio, video (the down-tracks paused), bitrate (a REMB cap sent to the
// browser), substream/temporal (the simulcast layer echoed), spatial_layer/temporal_layer (SVC
// layers), audiocodec, videocodec, videoprofile, and record/filename (each stream to a Janus .mjr
// file, record.go).
package echotest

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// Package is the Janus package name clients attach to.
const Package = "janus.plugin.echotest"

const (
	short = "echotest"
	// hint is what Janus's echotest puts in its `ack`.
	hint = "I'm taking my time!"
	// queueSize bounds the requests waiting for one handle.
	queueSize = 32
	// negotiateTimeout bounds answering one offer (half-trickle waits for gathering).
	negotiateTimeout = 30 * time.Second
)

// Plugin is the echotest plugin. Create it with New.
type Plugin struct {
	cfg      config.EchoTest
	rec      record.SessionOptions
	log      *slog.Logger
	sessions plugin.SessionSet[*session]
}

// New creates the plugin; rec says what recordings write beside the .mjr files (the
// configuration's recording section).
func New(cfg config.EchoTest, rec record.SessionOptions, log *slog.Logger) *Plugin {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, rec: rec, log: log}
}

// Package returns "janus.plugin.echotest".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata EchoTest plugin",
		Author:        "strata",
		Description:   "Sends back everything a peer sends: audio, video and data channel messages.",
		VersionString: "0.1.0",
		Version:       1,
	}
}

// AdminMessage echoes the request back, as Janus's echotest does.
func (p *Plugin) AdminMessage(_ context.Context, request json.RawMessage) any {
	return request
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

func (p *Plugin) forget(s *session) { p.sessions.Remove(s) }
