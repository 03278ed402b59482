package echotest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// noLimit is the REMB Janus sends when a bitrate cap is lifted (10 Mbit/s).
const noLimit = 10_000_000

// session is the echotest state of one handle. Requests are handled in order on the session's own
// goroutine (the `ack` goes out at once, the result follows as an event, as in Janus); media runs on
// one goroutine per incoming track.
type session struct {
	plugin *Plugin
	h      plugin.Handle
	log    *slog.Logger
	epoch  time.Time

	q *plugin.Queue // the asynchronous requests

	events plugin.Pusher // nothing is pushed after Detach

	audioActive, videoActive atomic.Bool
	bitrate, peerBitrate     atomic.Uint32

	mu         sync.Mutex // guards what follows
	peer       *peer.Peer
	batcher    udpbatch.Batcher
	streams    map[string]*echoStream // by mid
	videoCodec string
	audioCodec string
	prefs      codecPrefs
	targets    layerTargets
	delays     [2]*int64           // min_delay, max_delay: stored and reported, not applied yet
	recording  *record.Participant // the echo's recording (record.go), nil when not recording
	recNames   map[string]any      // handle_info's "recording": the .mjr file of each kind
}

// layerTargets are the requested layers; -1 keeps the stream's default (the highest).
type layerTargets struct {
	substream, temporal, spatial, temporalSVC int
}

func newSession(p *Plugin, h plugin.Handle) *session {
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	s := &session{
		plugin: p, h: h, log: log.With("plugin", short), epoch: time.Now(),
		streams: map[string]*echoStream{},
		targets: layerTargets{substream: 2, temporal: 2, spatial: 2, temporalSVC: 2},
	}
	s.audioActive.Store(true)
	s.videoActive.Store(true)
	s.q = plugin.NewQueue(queueSize, s.process)
	return s
}

// HandleMessage queues the request and acknowledges it; the result follows as an event.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	if err := s.q.Enqueue(m); err != nil {
		return plugin.Sync(plugin.Error(short, ErrUnknown, err.Error()))
	}
	return plugin.Async(hint)
}

// MediaReady: nothing to start, media is echoed as it arrives.
func (s *session) MediaReady() {}

// MediaClosed ends the echo, tells the client ("done", as Janus) and resets the controls.
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	s.stopRecording()
	s.mu.Lock()
	for _, st := range s.streams {
		st.close()
	}
	s.streams = map[string]*echoStream{}
	s.peer, s.batcher = nil, nil
	s.audioCodec, s.videoCodec = "", ""
	s.mu.Unlock()
	s.audioActive.Store(true)
	s.videoActive.Store(true)
	s.bitrate.Store(0)
	s.peerBitrate.Store(0)
	s.push("", map[string]any{short: "event", "result": "done"}, nil)
}

// Detach stops the session; afterwards nothing touches the handle.
func (s *session) Detach() {
	s.q.Close()
	s.events.Detach()
	s.stopRecording()
	s.mu.Lock()
	for _, st := range s.streams {
		st.close()
	}
	s.mu.Unlock()
	s.plugin.forget(s)
}

// push sends an event unless the handle is detached.
func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

func (s *session) pushError(tx string, err error) {
	var re *requestError
	if !errors.As(err, &re) {
		re = &requestError{ErrUnknown, err.Error()}
	}
	s.push(tx, plugin.Error(short, re.code, re.reason), nil)
}

func (s *session) process(m plugin.Message) {
	hasOffer := m.JSEP != nil && m.JSEP.SDP != ""
	req, rerr := parseRequest(m.Body, hasOffer)
	if rerr != nil {
		s.pushError(m.Transaction, rerr)
		return
	}
	if rerr := s.checkFilename(req); rerr != nil {
		s.pushError(m.Transaction, rerr)
		return
	}
	s.apply(req)
	ok := map[string]any{short: "event", "result": "ok"}
	if !hasOffer {
		s.applyRecord(req)
		s.push(m.Transaction, ok, nil)
		return
	}
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	answer, err := s.negotiate(ctx, m.JSEP)
	if err != nil {
		s.pushError(m.Transaction, err)
		return
	}
	s.applyRecord(req)
	s.push(m.Transaction, ok, answer)
}

// apply enforces the request's settings, as Janus does before looking at the JSEP.
func (s *session) apply(r *request) {
	if r.Audio != nil {
		s.audioActive.Store(*r.Audio)
	}
	if r.Video != nil {
		s.videoActive.Store(*r.Video)
	}
	if r.Audio != nil || r.Video != nil {
		s.mu.Lock()
		for _, st := range s.streams {
			// A resumed video starts again at a keyframe, which the down-track asks for.
			st.down.SetPaused(!s.active(st.video))
		}
		s.mu.Unlock()
	}
	if r.Bitrate != nil {
		b := uint32(min(*r.Bitrate, int64(^uint32(0))))
		s.bitrate.Store(b)
		s.sendREMB(b)
	}
	s.mu.Lock()
	if r.VideoCodec != nil {
		s.prefs.video = *r.VideoCodec
	}
	if r.VideoProfile != nil {
		s.prefs.profile = *r.VideoProfile
	}
	if r.AudioCodec != nil {
		s.prefs.audio = *r.AudioCodec
	}
	if r.MinDelay != nil {
		s.delays[0] = r.MinDelay
	}
	if r.MaxDelay != nil {
		s.delays[1] = r.MaxDelay
	}
	s.mu.Unlock()
	s.applyLayers(r)
}

// applyLayers moves the layer targets of the video streams; like Janus it answers with an event
// when the target is already what is echoed. Otherwise the down-track asks the browser for the
// keyframe it switches on.
func (s *session) applyLayers(r *request) {
	set := func(v *int64, target *int) bool {
		if v == nil {
			return false
		}
		*target = int(*v)
		return true
	}
	s.mu.Lock()
	changed := set(r.Substream, &s.targets.substream)
	changed = set(r.Temporal, &s.targets.temporal) || changed
	changed = set(r.Spatial, &s.targets.spatial) || changed
	changed = set(r.TemporalSVC, &s.targets.temporalSVC) || changed
	targets := s.targets
	first := s.firstStreamLocked(true)
	s.mu.Unlock()
	if !changed || first == nil {
		return
	}
	for _, st := range s.videoStreams() {
		st.down.SetTarget(st.target(targets))
	}
	if ev := first.echoing(targets, r); ev != nil {
		s.push("", ev, nil)
	}
}

// active reports whether the echo of audio (or video) is on.
func (s *session) active(video bool) bool {
	if video {
		return s.videoActive.Load()
	}
	return s.audioActive.Load()
}

// Query is the plugin_specific part of handle_info.
func (s *session) Query() any {
	q := map[string]any{
		"audio_active":   s.audioActive.Load(),
		"video_active":   s.videoActive.Load(),
		"bitrate":        s.bitrate.Load(),
		"peer-bitrate":   s.peerBitrate.Load(),
		"slowlink_count": 0,
		"hangingup":      0,
		"destroyed":      0,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recNames != nil {
		q["recording"] = s.recNames
	}
	if s.audioCodec != "" {
		q["audio_codec"] = s.audioCodec
	}
	if s.videoCodec != "" {
		q["video_codec"] = s.videoCodec
	}
	if s.delays[0] != nil {
		q["min_delay"] = *s.delays[0]
	}
	if s.delays[1] != nil {
		q["max_delay"] = *s.delays[1]
	}
	if v := s.firstStreamLocked(true); v != nil {
		v.query(q, s.targets)
	}
	return q
}
