package recordplay

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
)

const (
	// queueSize bounds the requests waiting for one handle.
	queueSize = 32
	// negotiateTimeout bounds answering or making one offer (half-trickle waits for gathering).
	negotiateTimeout = 30 * time.Second
	// Janus's defaults for a recorder: the REMB cap sent to the browser and how often a keyframe
	// is asked for (configure's video-bitrate-max and video-keyframe-interval).
	defaultBitrate    = 1024 * 1024
	defaultKeyframeMs = 15000
)

// session is the Record&Play state of one handle: a recorder, a player, or neither. Requests are
// handled in order on the session's own goroutine (the `ack` goes out at once, the result follows
// as an event, as in Janus).
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger

	q *plugin.Queue // the asynchronous requests

	events plugin.Pusher // nothing is pushed after Detach

	mu         sync.Mutex // guards what follows
	rec        *recorder
	play       *player
	bitrate    uint32
	keyframeMs uint32
	ready      bool // the PeerConnection is up
	// lastID is the recording the session recorded or played last: what `stop` reports when the
	// client's hangup ended the media just before the stop request was handled (janus.js's demo
	// sends both at once).
	lastID uint64
}

func newSession(p *Plugin, h plugin.Handle) *session {
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	s := &session{p: p, h: h, log: log.With("plugin", short), bitrate: defaultBitrate, keyframeMs: defaultKeyframeMs}
	s.q = plugin.NewQueue(queueSize, s.process)
	return s
}

// HandleMessage answers list, update and configure at once and queues the others, as Janus does.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	if s.q.Context().Err() != nil {
		return plugin.Sync(plugin.Error(short, ErrUnknown, "Session has already been destroyed..."))
	}
	name, b, rerr := plugin.DecodeRequest(m.Body, &codes)
	if rerr != nil {
		return plugin.Sync(rerr.Data(short))
	}
	switch name {
	case "update":
		s.p.lib.scan()
		return plugin.Sync(map[string]any{short: "ok"})
	case "list":
		return plugin.Sync(s.p.listReply())
	case "configure":
		return plugin.Sync(s.configure(b))
	case "record", "play", "start", "stop", "pause", "resume":
		if err := s.q.Enqueue(m); err != nil {
			return plugin.Sync(plugin.Error(short, ErrUnknown, err.Error()))
		}
		return plugin.Async("")
	default:
		return plugin.Sync(plugin.Error(short, ErrInvalidRequest, "Unknown request '"+b.Str("request")+"'"))
	}
}

// configure sets a recorder's REMB cap and keyframe interval.
func (s *session) configure(b plugin.Body) map[string]any {
	if rerr := b.Validate(
		plugin.Param{Name: "video-bitrate-max", Kind: plugin.Positive},
		plugin.Param{Name: "video-keyframe-interval", Kind: plugin.Positive},
	); rerr != nil {
		return rerr.Data(short)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := b.OptInt("video-bitrate-max"); v != nil {
		s.bitrate = uint32(min(*v, int64(^uint32(0))))
	}
	if v := b.OptInt("video-keyframe-interval"); v != nil {
		s.keyframeMs = uint32(min(*v, int64(^uint32(0))))
	}
	return map[string]any{short: "configure", "status": "ok", "settings": map[string]any{
		"video-keyframe-interval": s.keyframeMs, "video-bitrate-max": s.bitrate}}
}

// process handles one asynchronous request and pushes its result or error.
func (s *session) process(m plugin.Message) {
	name, b, _ := plugin.DecodeRequest(m.Body, &codes) // HandleMessage checked it
	var (
		result map[string]any
		jsep   *plugin.JSEP
		rerr   *plugin.RequestError
	)
	switch name {
	case "record":
		result, jsep, rerr = s.record(b, m.JSEP)
	case "play":
		result, jsep, rerr = s.startPlay(b, m.JSEP)
	case "start":
		result, rerr = s.start(m.JSEP)
	case "stop":
		s.stop(m.Transaction)
		return
	case "pause", "resume":
		result = s.pauseResume(b.Str("request") == "pause")
	}
	if rerr != nil {
		s.push(m.Transaction, rerr.Data(short), nil)
		return
	}
	ev := map[string]any{short: "event"}
	if result != nil {
		ev["result"] = result
	}
	s.push(m.Transaction, ev, jsep)
}

// stop ends whatever the session does: the result first, then the PeerConnection goes, and its
// MediaClosed completes the recording and says "done".
func (s *session) stop(tx string) {
	result := map[string]any{"status": "stopped"}
	s.mu.Lock()
	switch {
	case s.rec != nil:
		result["id"] = s.rec.rec.ID
	case s.play != nil:
		result["id"] = s.play.rec.ID
	case s.lastID != 0:
		result["id"] = s.lastID
	}
	s.lastID = 0
	s.mu.Unlock()
	s.push(tx, map[string]any{short: "event", "result": result}, nil)
	s.h.ClosePeer("stop")
}

// pauseResume pauses or resumes the recording or the playout; nil when there is neither (Janus
// answers with an event without a result).
func (s *session) pauseResume(pause bool) map[string]any {
	s.mu.Lock()
	rec, play := s.rec, s.play
	s.mu.Unlock()
	status := map[bool]string{true: "paused", false: "resumed"}[pause]
	switch {
	case rec != nil:
		rec.setPaused(pause)
		return map[string]any{"status": status, "id": rec.rec.ID}
	case play != nil:
		if pause {
			play.src.Pause()
		} else {
			play.src.Resume()
		}
		return map[string]any{"status": status, "id": play.rec.ID}
	}
	return nil
}

// MediaReady starts a playout whose answer is in.
func (s *session) MediaReady() {
	s.mu.Lock()
	play := s.play
	s.ready = true
	s.mu.Unlock()
	if play != nil {
		play.begin()
	}
}

func (s *session) isReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// MediaClosed ends the recording (its .nfo is written) or the playout and tells the client
// ("done", as Janus).
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	if s.endMedia() {
		s.push("", map[string]any{short: "event", "result": "done"}, nil)
	}
}

// endMedia closes the recorder or player; false when there was neither.
func (s *session) endMedia() bool {
	s.mu.Lock()
	rec, play := s.rec, s.play
	s.rec, s.play, s.ready = nil, nil, false
	switch {
	case rec != nil:
		s.lastID = rec.rec.ID
	case play != nil:
		s.lastID = play.rec.ID
	}
	s.mu.Unlock()
	if rec != nil {
		rec.finish()
	}
	if play != nil {
		play.close()
	}
	return rec != nil || play != nil
}

// Detach stops the session; a recording in progress is completed. Afterwards nothing touches the
// handle.
func (s *session) Detach() {
	s.q.Close()
	s.events.Detach()
	s.endMedia()
	s.p.forget(s)
}

// push sends an event unless the handle is detached.
func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

// Query is the plugin_specific part of handle_info, as Janus's.
func (s *session) Query() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := map[string]any{"type": "none", "hangingup": 0, "destroyed": 0}
	var r *recording
	switch {
	case s.rec != nil:
		q["type"], r = "recorder", s.rec.rec
		q["recorded"] = s.rec.stats()
	case s.play != nil:
		q["type"], r = "player", s.play.rec
		st := s.play.src.Stats()
		q["played"] = map[string]any{"packets": st.Packets, "skipped": st.Skipped}
		q["paused"] = s.play.src.Paused()
	}
	if r != nil {
		q["recording_id"], q["recording_name"] = r.ID, r.Name
	}
	return q
}
