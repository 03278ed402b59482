package sip

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// bridgeConfig is where the media bridges' plain-RTP sockets live.
func (p *Plugin) bridgeConfig() rtpbridge.Config {
	lo, hi, _ := config.ParsePortRange(p.cfg.RTPPortRange) // validated with the configuration
	return rtpbridge.Config{LocalIP: p.localIP, SDPIP: p.cfg.SDPIP, PortMin: lo, PortMax: hi}
}

// recording is Janus's recording request: start or stop recording our side ("user": audio, video)
// and the peer's (peer_audio, peer_video), each side one participant of .mjr files.
func (s *session) recording(r req) *plugin.RequestError {
	c, rerr := s.established()
	if rerr != nil {
		return rerr
	}
	action := r.b.Str("action")
	if action != "start" && action != "stop" {
		return plugin.Errorf(ErrInvalidElement, "Invalid action (should be start|stop)")
	}
	b := r.b
	if !b.Bool("audio") && !b.Bool("video") && !b.Bool("peer_audio") && !b.Bool("peer_video") {
		return plugin.Errorf(ErrRecording, "Invalid request (at least one of audio, video, peer_audio and peer_video should be true)")
	}
	if action == "stop" {
		s.mu.Lock()
		rec := s.rec
		s.rec = nil
		s.mu.Unlock()
		closeRecordings(rec)
		s.event(r.tx, c.id, map[string]any{"event": "recordingupdated"}, nil)
		return nil
	}
	base := b.Str("filename")
	if base == "" {
		base = fmt.Sprintf("sip-%s-%d", sanitize(c.id), time.Now().UnixMicro())
	}
	user, peer := c.bridge.Receivers()
	var parts []*record.Participant
	for _, side := range []struct {
		name         string
		tracks       []rtpbridge.Track
		audio, video bool
	}{{"user", user, b.Bool("audio"), b.Bool("video")}, {"peer", peer, b.Bool("peer_audio"), b.Bool("peer_video")}} {
		if !side.audio && !side.video {
			continue
		}
		part, err := s.recordSide(base+"-"+side.name, side.tracks, side.audio, side.video)
		if err != nil {
			closeRecordings(parts)
			return plugin.Errorf(ErrRecording, "Error starting recorder: %v", err)
		}
		parts = append(parts, part)
	}
	if b.Bool("send_peer_pli") {
		c.bridge.RequestKeyframeFrom(false, true)
	}
	s.mu.Lock()
	old := s.rec
	s.rec = parts
	s.mu.Unlock()
	closeRecordings(old)
	s.event(r.tx, c.id, map[string]any{"event": "recordingupdated"}, nil)
	return nil
}

// recordSide records one side's audio and/or video tracks as <base>-audio.mjr, <base>-video.mjr.
func (s *session) recordSide(base string, tracks []rtpbridge.Track, audio, video bool) (*record.Participant, error) {
	path, err := record.Confine(s.p.cfg.RecordingsDir, "", base+"-audio.mjr")
	if err != nil {
		return nil, err
	}
	dir, name := filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), "-audio.mjr")
	part, err := record.NewParticipant(dir, name, record.SessionOptions{})
	if err != nil {
		return nil, err
	}
	for _, t := range tracks {
		if (t.Video && !video) || (!t.Video && !audio) {
			continue
		}
		if _, err := part.Record(t.Receiver, "", t.Fmtp); err != nil {
			_, _ = part.Close()
			return nil, err
		}
	}
	return part, nil
}

func closeRecordings(parts []*record.Participant) {
	for _, p := range parts {
		_, _ = p.Close()
	}
}

// keyframe asks both sides for a keyframe (Janus: PLI to the browser, FIR/PLI to the SIP peer).
func (s *session) keyframe(r req) *plugin.RequestError {
	c, rerr := s.established()
	if rerr != nil {
		return rerr
	}
	c.bridge.RequestKeyframe()
	s.event(r.tx, c.id, map[string]any{"event": "keyframesent"}, nil)
	return nil
}

// sanitize keeps a Call-ID usable in a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == '.' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}
