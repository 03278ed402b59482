// Package recordplay is janus.plugin.recordplay (Janus 1.1's Record&Play, docs/RECORDPLAY.md):
// a client records what it sends — each incoming track an sfu.Receiver with a record.MJR sink,
// the recording described by a .nfo file as Janus writes it — and plays recordings back — the
// .mjr files played by an mjrplay.Source into Receivers whose DownTracks send them to the client.
// Recordings made by Janus play here, and Janus plays the ones made here.
package recordplay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// Package is the Janus package name clients attach to; short the tag of its plugindata.
const (
	Package = "janus.plugin.recordplay"
	short   = "recordplay"
)

// Janus's Record&Play error codes (JANUS_RECORDPLAY_ERROR_* in janus_recordplay.c).
const (
	ErrNoMessage        = 411
	ErrInvalidJSON      = 412
	ErrInvalidRequest   = 413
	ErrInvalidElement   = 414
	ErrMissingElement   = 415
	ErrNotFound         = 416
	ErrInvalidRecording = 417
	ErrInvalidState     = 418
	ErrInvalidSDP       = 419
	ErrRecordingExists  = 420
	ErrUnknown          = 499
)

var codes = plugin.Codes{
	NoMessage:   ErrNoMessage,
	InvalidJSON: ErrInvalidJSON,
	Missing:     ErrMissingElement,
	Invalid:     ErrInvalidElement,
}

func errorf(code int, format string, args ...any) *plugin.RequestError {
	return plugin.Errorf(code, format, args...)
}

// Plugin is the Record&Play plugin. Create it with New.
type Plugin struct {
	log      *slog.Logger
	lib      *library
	rec      record.SessionOptions
	sessions plugin.SessionSet[*session]
}

// New creates the plugin over its recordings directory and lists the recordings there; rec says
// whether a recording also gets a playable file (recording.playable).
func New(cfg config.RecordPlay, rec record.SessionOptions, log *slog.Logger) (*Plugin, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lib, err := newLibrary(cfg.Path, log)
	if err != nil {
		return nil, err
	}
	lib.scan()
	return &Plugin{log: log, lib: lib, rec: rec}, nil
}

// newSession starts the files of a recording: base-audio.mjr, base-video.mjr and, with
// recording.playable, base.webm (or .mp4, .opus), in the recordings directory.
func (p *Plugin) newSession(base string, log *slog.Logger) (*record.Session, error) {
	if err := os.MkdirAll(p.lib.dir, 0o755); err != nil {
		return nil, fmt.Errorf("recordings directory: %w", err)
	}
	opts := p.rec
	opts.Log = log
	return record.NewSession(p.lib.dir, base, opts)
}

// Package returns "janus.plugin.recordplay".
func (p *Plugin) Package() string { return Package }

// Info describes the plugin for the `info` request.
func (p *Plugin) Info() plugin.Info {
	return plugin.Info{
		Name:          "strata Record&Play plugin",
		Author:        "strata",
		Description:   "Records WebRTC sessions to .mjr files and plays them back, as Janus's Record&Play does.",
		VersionString: "0.0.4",
		Version:       4,
	}
}

// AdminMessage answers `update` over the admin API, as Janus does.
func (p *Plugin) AdminMessage(_ context.Context, request json.RawMessage) any {
	name, b, rerr := plugin.DecodeRequest(request, &codes)
	if rerr != nil {
		return rerr.Data(short)
	}
	if name != "update" {
		return plugin.Error(short, ErrInvalidRequest, "Unknown request '"+b.Str("request")+"'")
	}
	p.lib.scan()
	return map[string]any{short: "ok"}
}

// Attach creates the state of a newly attached handle.
func (p *Plugin) Attach(h plugin.Handle) (plugin.Session, error) {
	s := newSession(p, h)
	p.sessions.Add(s)
	return s, nil
}

// Destroy detaches every session (server shutdown): recordings in progress are completed.
func (p *Plugin) Destroy() {
	for _, s := range p.sessions.All() {
		s.Detach()
	}
}

func (p *Plugin) forget(s *session) { p.sessions.Remove(s) }

// listReply is `list`'s reply: Janus's fields per recording, and (a strata addition) the .nfo
// files the last scan could not list, with the reason.
func (p *Plugin) listReply() map[string]any {
	list := []map[string]any{}
	for _, r := range p.lib.list() {
		e := map[string]any{"id": r.ID, "name": r.Name, "date": r.Date,
			"audio": r.Audio != "", "video": r.Video != "", "data": r.Data != ""}
		describe := func(kind string, m medium) {
			if m.codec.String() != "" {
				e[kind+"_codec"] = m.codec.String()
			}
			if m.err != nil {
				e[kind+"_error"] = m.err.Error()
			}
		}
		describe("audio", r.audio)
		describe("video", r.video)
		if r.audio.opusRED {
			e["audio_red"] = true
		}
		list = append(list, e)
	}
	reply := map[string]any{short: "list", "list": list}
	if bad := p.lib.invalidFiles(); len(bad) > 0 {
		reply["invalid"] = bad
	}
	return reply
}
